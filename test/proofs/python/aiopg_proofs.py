"""Proofs of aiopg 1.4's connections and pool, run on the fixtures: aiopg runs
psycopg2 in asynchronous mode, so every connection is in autocommit, and
Pool.release() resets nothing. Each job runs the fixture's own function on a
pool of one connection; a probe that sets nothing then acquires the same
connection and reports what it sees.

    /usr/bin/python3 test/proofs/python/aiopg_proofs.py <proof> <worker-url>
"""


import aiopg

from fixtures import PROBE, load, run_async_proof


def one_connection_pools(url):
    """aiopg.create_pool pointed at the test database with one connection; returns the pools it made."""
    made = []
    original = aiopg.create_pool

    async def create_pool(dsn="", **kwargs):
        kwargs.update(minsize=1, maxsize=1)
        pool = await original(url, **kwargs)
        made.append(pool)
        return pool

    aiopg.create_pool = create_pool
    return made


async def probe(pool):
    async with pool.acquire() as conn:
        async with conn.cursor() as cur:
            await cur.execute(PROBE)
            setting, user, invoices = await cur.fetchone()
            return {"setting": setting, "user": user, "invoices": invoices}


async def job_then_probe(module, function, url):
    """Runs module.function(pool, tenant 1) on a one-connection pool, then the probe on that pool."""
    pool = await aiopg.create_pool(url, minsize=1, maxsize=1)
    try:
        row = await getattr(module, function)(pool, 1)
        return {"job": row[0] if row else None, "next": await probe(pool)}
    finally:
        pool.close()
        await pool.wait_closed()


async def proof_session(url):
    """no-session-tenant-setting: the bad fixture's session setting reaches the next job; the good one's does not."""
    pools = one_connection_pools(url)
    bad = load("python/no-session-tenant-setting/bad-aiopg.py", url)
    good = load("python/no-session-tenant-setting/good-aiopg.py", url)
    bad_result = await job_then_probe(bad, "count_invoices", url)
    # The good fixture makes its own pool (with its on_connect callback): probe that pool.
    count = await good.count_invoices(1)
    good_result = {"job": count[0], "next": await probe(pools[-1])}
    for pool in pools:
        pool.close()
        await pool.wait_closed()
    return {"bad": bad_result, "good": good_result}


async def proof_local(url):
    """no-local-setting-outside-transaction: in autocommit the local setting ends with its own statement."""
    bad = load("python/no-local-setting-outside-transaction/bad-aiopg.py", url)
    good = load("python/no-local-setting-outside-transaction/good-aiopg.py", url)
    return {"bad": await job_then_probe(bad, "count_invoices", url), "good": await job_then_probe(good, "count_invoices", url)}


PROOFS = {"session": proof_session, "local": proof_local}


if __name__ == "__main__":
    run_async_proof(PROOFS, {"aiopg": aiopg.__version__})
