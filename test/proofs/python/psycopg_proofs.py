"""Proofs of the psycopg 3 / psycopg_pool behaviours the Python rules stand on.

Run by test/proofs/py-*.test.ts with Debian's interpreter:
    /usr/bin/python3 test/proofs/python/psycopg_proofs.py <proof> <worker-url>
Each proof runs the bad and the good pattern against the seeded test database
and prints one JSON object with what it measured. It asserts nothing itself:
the Node tests read the JSON and assert.
"""

import json
import logging
import sys

import psycopg
import psycopg_pool
from psycopg_pool import ConnectionPool


class Collect(logging.Handler):
    """Keeps the pool's warnings so the test can count them."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def make_pool(url, **options):
    return ConnectionPool(url, min_size=1, max_size=1, open=True, **options)


def probe(pool):
    """A job that sets nothing: what tenant and how many invoices does it see?"""
    with pool.connection() as conn:
        setting, rows = conn.execute(
            "select current_setting('app.tenant', true), (select count(*) from invoices)"
        ).fetchone()
        return {"setting": setting, "rows": rows}


# ---- F2: session setting with psycopg's implicit transaction -------------------------


def tenant_jobs(url, local):
    """Jobs for tenants 1, 2, 3; job 2 raises after setting its tenant."""
    pool = make_pool(url)
    seen = []
    try:
        for tenant in (1, 2, 3):
            failed = False
            try:
                with pool.connection() as conn:
                    conn.execute(
                        "select set_config('app.tenant', %s, %s)", [str(tenant), local]
                    )
                    conn.execute("select count(*) from invoices").fetchone()
                    if tenant == 2:
                        raise RuntimeError("job 2 fails")
            except RuntimeError:
                failed = True
            seen.append({"tenant": tenant, "failed": failed, "next": probe(pool)})
    finally:
        pool.close()
    return seen


def proof_session_leak(url):
    return {"session": tenant_jobs(url, False), "local": tenant_jobs(url, True)}


# ---- F3 in psycopg: a local setting in autocommit ------------------------------------


def local_in_autocommit(url, in_transaction):
    """A pool in autocommit: set the tenant with set_config(..., true), then count."""
    pool = make_pool(url, kwargs={"autocommit": True})
    try:
        with pool.connection() as conn:
            if in_transaction:
                with conn.transaction():
                    conn.execute("select set_config('app.tenant', '1', true)")
                    rows = conn.execute("select count(*) from invoices").fetchone()[0]
            else:
                conn.execute("select set_config('app.tenant', '1', true)")
                rows = conn.execute("select count(*) from invoices").fetchone()[0]
    finally:
        pool.close()
    return {"rows": rows}


def proof_local_autocommit(url):
    return {"autocommit": local_in_autocommit(url, False), "transaction": local_in_autocommit(url, True)}


# ---- F7: reset= callback that runs SQL without autocommit ----------------------------


def reset_jobs(url, reset, jobs=20, **options):
    handler = Collect()
    logger = logging.getLogger("psycopg.pool")
    logger.addHandler(handler)
    pool = make_pool(url, reset=reset, **options)
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


def reset_in_transaction(conn):
    conn.execute("RESET app.tenant")


def reset_in_autocommit(conn):
    conn.autocommit = True
    conn.execute("RESET app.tenant")
    conn.autocommit = False


def reset_then_commit(conn):
    conn.execute("RESET app.tenant")
    conn.commit()


def discard_in_transaction(conn):
    conn.execute("DISCARD ALL")


def configure_in_transaction(conn):
    conn.execute("SET search_path TO public")


def configure_then_commit(conn):
    conn.execute("SET search_path TO public")
    conn.commit()


def configure_pool(url, configure):
    """Can a pool whose configure= leaves a transaction open get a connection at all?"""
    handler = Collect()
    logger = logging.getLogger("psycopg.pool")
    logger.addHandler(handler)
    pool = ConnectionPool(url, min_size=1, max_size=1, open=False, configure=configure)
    opened = True
    try:
        # The wait only bounds how long the proof tries: a pool that refuses
        # every new connection never gets one, however long it waits.
        pool.open(wait=True, timeout=3)
    except psycopg_pool.PoolTimeout:
        opened = False
    finally:
        pool.close()
        logger.removeHandler(handler)
    return {"opened": opened, "warnings": handler.messages}


def proof_reset_intrans(url):
    return {
        "bad": reset_jobs(url, reset_in_transaction),
        "discard_bad": reset_jobs(url, discard_in_transaction),
        "good_autocommit": reset_jobs(url, reset_in_autocommit),
        "good_commit": reset_jobs(url, reset_then_commit),
        "configure_bad": configure_pool(url, configure_in_transaction),
        "configure_good": configure_pool(url, configure_then_commit),
    }


# ---- F6: DISCARD ALL with psycopg's automatic prepared statements --------------------


def discard_in_autocommit(conn):
    conn.autocommit = True
    conn.execute("DISCARD ALL")
    conn.autocommit = False


def prepared_jobs(url, jobs=12, queries_per_job=1, **options):
    """Each job runs the same query; the reset callback runs DISCARD ALL."""
    pool = make_pool(url, reset=discard_in_autocommit, **options)
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
    return {
        # The source's shape: one query per job, DISCARD ALL on every return.
        "default_threshold": prepared_jobs(url),
        # The query is prepared within job 1, before the first DISCARD ALL runs.
        "prepared_before_first_discard": prepared_jobs(url, jobs=3, queries_per_job=7),
        "threshold_none": prepared_jobs(url, kwargs={"prepare_threshold": None}),
    }


PROOFS = {
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
