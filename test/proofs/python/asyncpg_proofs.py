"""Proofs of what asyncpg 0.27's pool resets on release, run on the fixtures:
each job writes its setting its way and returns the connection; a job that
sets nothing acquires the same connection (max_size=1) and reports what it
sees. Run with the role pgq_tenant_role granted to the worker role.

    /usr/bin/python3 test/proofs/python/asyncpg_proofs.py <proof> <worker-url>
"""


import asyncpg

from fixtures import load, run_async_proof

PROBE = "select current_setting('app.tenant', true), current_user::text, current_setting('search_path'), session_user::text"


async def probe(pool):
    async with pool.acquire() as conn:
        setting, user, search_path, session_user = await conn.fetchrow(PROBE)
        return {"setting": setting, "user": user, "search_path": search_path, "session_user": session_user}


async def after(module, function, argument):
    await module.start()
    try:
        await getattr(module, function)(argument)
        return await probe(module.pool)
    finally:
        await module.pool.close()


async def proof_reset(url, owner_url):
    bad = load("python/no-session-tenant-setting/bad-asyncpg.py", url)
    # SET SESSION AUTHORIZATION needs a superuser session: the same fixture, connected as the owner.
    as_owner = load("python/no-session-tenant-setting/bad-asyncpg.py", owner_url, name="bad_asyncpg_owner")
    good = load("python/no-session-tenant-setting/good-asyncpg.py", url)
    return {
        "bad": {
            "run_job_as_role": await after(bad, "run_job_as_role", "pgq_tenant_role"),
            "run_job_set_config_role": await after(bad, "run_job_set_config_role", "pgq_tenant_role"),
            "run_job_as_user": await after(as_owner, "run_job_as_user", "pgq_worker"),
        },
        "good": {
            "run_job": await after(good, "run_job", 1),
            "run_job_search_path": await after(good, "run_job_search_path", "pg_catalog"),
            "run_job_as_role": await after(good, "run_job_as_role", "pgq_tenant_role"),
        },
    }


async def proof_discard(url, owner_url=None):
    bad = load("python/no-discard-all-with-prepared-statements/bad-asyncpg.py", url)
    good = load("python/no-discard-all-with-prepared-statements/good-asyncpg.py", url)
    return {"bad": await jobs(bad), "good": await jobs(good)}


async def jobs(module, count=4):
    """Job 2 runs the module's cleanup; every job runs the same query."""
    await module.start()
    results = []
    try:
        for job in range(1, count + 1):
            try:
                await module.run_job(job)
                if job == 2:
                    await module.cleanup()
                results.append({"job": job, "error": None})
            except asyncpg.PostgresError as error:
                results.append({"job": job, "error": type(error).__name__ + ": " + str(error).splitlines()[0]})
    finally:
        await module.pool.close()
    return results


PROOFS = {"reset": proof_reset, "discard": proof_discard}


if __name__ == "__main__":
    run_async_proof(PROOFS, {"asyncpg": asyncpg.__version__})
