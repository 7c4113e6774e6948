"""Proofs of the psycopg 3 / psycopg_pool behaviours the Python rules stand on.

Run by test/proofs/py-*.test.ts with Debian's interpreter:
    /usr/bin/python3 test/proofs/python/psycopg_proofs.py <proof> <worker-url>
Each proof imports the rule's bad and good fixtures (fixtures/python/...),
runs their own functions and pools against the seeded test database and
prints one JSON object with what it measured. It asserts nothing itself:
the Node tests read the JSON and assert.
"""

import json
import logging
import sys
from types import SimpleNamespace

import psycopg
import psycopg_pool

from fixtures import load_psycopg


def probe(pool):
    """A job that sets nothing: what tenant and how many invoices does it see?"""
    with pool.connection() as conn:
        setting, rows = conn.execute(
            "select current_setting('app.tenant', true), (select count(*) from invoices)"
        ).fetchone()
        return {"setting": setting, "rows": rows}


def opened(pool):
    pool.open(wait=True, timeout=10)
    return pool


# ---- F2: session setting with psycopg's implicit transaction -------------------------


def tenant_jobs(module):
    """The fixture's run_job for tenants 1, 2, 3; job 2 fails after setting its tenant."""
    pool = opened(module.pool)
    seen = []
    try:
        for tenant in (1, 2, 3):
            failed = False
            try:
                module.run_job(SimpleNamespace(tenant_id=tenant, kind="fail" if tenant == 2 else "report"))
                if tenant == 2:
                    raise RuntimeError("job 2 fails")
            except RuntimeError:
                failed = True
            seen.append({"tenant": tenant, "failed": failed, "next": probe(pool)})
    finally:
        pool.close()
    return seen


def proof_session_leak(url):
    bad = load_psycopg("python/no-session-tenant-setting/bad.py", url)
    good = load_psycopg("python/no-session-tenant-setting/good.py", url)
    return {"session": tenant_jobs(bad), "local": tenant_jobs(good)}


# ---- F3 in psycopg: a local setting in autocommit ------------------------------------


def proof_local_autocommit(url):
    bad = load_psycopg("python/no-local-setting-outside-transaction/bad.py", url)
    good = load_psycopg("python/no-local-setting-outside-transaction/good.py", url)
    results = {}
    for name, module in (("autocommit", bad), ("transaction", good)):
        pool = opened(module.pool)
        try:
            results[name] = {"rows": module.run_job(SimpleNamespace(tenant_id=1))[0]}
        finally:
            pool.close()
    return results


# ---- F7: reset= and configure= callbacks that run SQL without autocommit --------------


class Collect(logging.Handler):
    """Keeps the pool's warnings so the test can count them."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def single(pool):
    """The fixture's pool with one connection: its own kwargs and callbacks, so each job reuses it (or not)."""
    return psycopg_pool.ConnectionPool(
        pool.conninfo, min_size=1, max_size=1, open=False, kwargs=pool.kwargs, reset=pool._reset, configure=pool._configure
    )


def reset_jobs(fixture_pool, jobs=20):
    """20 jobs on the fixture's pool (one connection), each setting the tenant for its session."""
    pool = single(fixture_pool)
    handler = Collect()
    logger = logging.getLogger("psycopg.pool")
    logger.addHandler(handler)
    opened(pool)
    backends = []
    try:
        for _ in range(jobs):
            with pool.connection() as conn:
                conn.execute("select set_config('app.tenant', '1', false)")
                backends.append(
                    conn.execute(
                        "select pg_backend_pid(), backend_start::text from pg_stat_activity"
                        " where pid = pg_backend_pid()"
                    ).fetchone()
                )
        # psycopg_pool runs reset= in a worker thread after putconn. With
        # max_size=1 the next checkout waits for it, so once we hold the
        # connection again every job's reset has run and logged.
        with pool.connection():
            warnings = list(handler.messages)
            stats = pool.get_stats()
    finally:
        pool.close()
        logger.removeHandler(handler)
    return {
        "jobs": jobs,
        "connections": stats.get("connections_num", 0),
        "distinct_backends": len(set(backends)),
        "warnings": warnings,
    }


def configure_pool(fixture_pool):
    """Can a pool whose configure= leaves a transaction open get a connection at all?"""
    pool = single(fixture_pool)
    handler = Collect()
    logger = logging.getLogger("psycopg.pool")
    logger.addHandler(handler)
    ok = True
    try:
        # The wait only bounds how long the proof tries: a pool that refuses
        # every new connection never gets one, however long it waits.
        pool.open(wait=True, timeout=3)
    except psycopg_pool.PoolTimeout:
        ok = False
    finally:
        pool.close()
        logger.removeHandler(handler)
    return {"opened": ok, "warnings": handler.messages}


def proof_reset_intrans(url):
    bad = load_psycopg("python/require-autocommit-in-reset/bad.py", url)
    good = load_psycopg("python/require-autocommit-in-reset/good.py", url)
    return {
        "bad": reset_jobs(bad.pool),  # reset=reset_tenant
        "discard_bad": reset_jobs(bad.discarding),  # reset=discard_all
        "good_autocommit": reset_jobs(good.a),  # reset=reset_autocommit (and configure=configure)
        "good_commit": reset_jobs(good.b),  # reset=reset_commit
        "configure_bad": configure_pool(bad.configured),  # configure=set_search_path
        "configure_good": configure_pool(good.a),  # configure=configure, which commits
    }


# ---- F6: DISCARD ALL with psycopg's automatic prepared statements --------------------


def prepared_jobs(fixture_pool, jobs=12, queries_per_job=1):
    """Each job runs the same query; the fixture's reset callback runs DISCARD ALL."""
    pool = opened(single(fixture_pool))
    results = []
    try:
        for job in range(1, jobs + 1):
            try:
                with pool.connection() as conn:
                    for _ in range(queries_per_job):
                        conn.execute(
                            "select count(*) from invoices where tenant_id = %s", [1]
                        ).fetchone()
                results.append({"job": job, "error": None})
            except psycopg.Error as error:
                results.append({"job": job, "error": str(error).strip()})
    finally:
        pool.close()
    return results


def proof_discard_prepared(url):
    bad = load_psycopg("python/no-discard-all-with-prepared-statements/bad.py", url)
    good = load_psycopg("python/no-discard-all-with-prepared-statements/good.py", url)
    return {
        # The source's shape: one query per job, DISCARD ALL (reset=discard_all) on every return.
        "default_threshold": prepared_jobs(bad.pool),
        # The query is prepared within job 1, before the first DISCARD ALL runs.
        "prepared_before_first_discard": prepared_jobs(bad.pool, jobs=3, queries_per_job=7),
        # kwargs={"prepare_threshold": None}, the same reset.
        "threshold_none": prepared_jobs(good.pool),
    }


def proof_configure_hook(url):
    """psycopg_pool's configure= reading a job's thread-local: which tenant the pool's connection gets, and what each
    job then counts on a pool of one connection."""
    results = {}
    for name, path in (("worker", "good-configure-hook-pool-worker.py"), ("good", "good-configure-hook-fixed-value.py")):
        fixture = load_psycopg("python/no-session-tenant-setting/" + path, url)
        fixture.pool.open(wait=True)
        try:
            counts = [fixture.count_invoices(t) for t in (1, 2, 3)]
            with fixture.pool.connection() as conn:
                left = conn.execute("select current_setting('app.tenant', true)").fetchone()[0]
        finally:
            fixture.pool.close()
        results[name] = {"counts": counts, "left": left}
    return results


PROOFS = {
    "configure-hook": proof_configure_hook,
    "session-leak": proof_session_leak,
    "local-autocommit": proof_local_autocommit,
    "reset-intrans": proof_reset_intrans,
    "discard-prepared": proof_discard_prepared,
}


def main():
    name, url = sys.argv[1], sys.argv[2]
    result = PROOFS[name](url)
    print(
        json.dumps(
            {
                "python": sys.version.split()[0],
                "psycopg": psycopg.__version__,
                "psycopg_pool": psycopg_pool.__version__,
                "result": result,
            }
        )
    )


if __name__ == "__main__":
    main()
