"""Proofs of pgq_audit.guard on psycopg_pool (Debian's psycopg 3.1 / psycopg_pool 3.1).

Run by test/python-guard/*.test.ts with Debian's interpreter and
PYTHONPATH=<repo>/python:<Debian's packages>:
    /usr/bin/python3 psycopg_pool_proofs.py <proof> <worker-url> [owner-url]
Each proof prints one JSON object with what it measured; the Node tests assert.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import sys
import threading
import time
from typing import Any, Dict, List, Optional

import psycopg
import psycopg_pool
from psycopg_pool import AsyncConnectionPool, ConnectionPool

import pgq_audit
from pgq_audit.guard import LeakReport, TenantLeakError, guard_pool, guard_stats

PROBE = "select current_setting('app.tenant', true), (select count(*) from invoices)"


def versions() -> Dict[str, str]:
    return {"psycopg": psycopg.__version__, "psycopg_pool": psycopg_pool.__version__, "pgq_audit": pgq_audit.__version__}


class Collect(logging.Handler):
    """Keeps a logger's warnings so the test can count them."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def listen(name: str) -> Collect:
    handler = Collect()
    logging.getLogger(name).addHandler(handler)
    return handler


# ---- the seed's sequence: tenants 1, 2, 3, the middle job failing ----------------------


def seed_job(pool: Any, tenant: int) -> None:
    """The seed's job: the tenant for the session, one query; job 2 fails after setting it."""
    with pool.connection() as conn:
        conn.execute("select set_config('app.tenant', %s, false)", [str(tenant)])
        conn.execute("select count(*) from invoices").fetchone()
        if tenant == 2:
            raise RuntimeError("job 2 fails")


def local_job(pool: Any, tenant: int) -> None:
    """The same job with a transaction-local setting (psycopg's implicit transaction)."""
    with pool.connection() as conn:
        conn.execute("select set_config('app.tenant', %s, true)", [str(tenant)])
        conn.execute("select count(*) from invoices").fetchone()
        if tenant == 2:
            raise RuntimeError("job 2 fails")


def probe(pool: Any) -> Dict[str, Any]:
    """The next job, which sets no tenant: what does it see, or is it refused?"""
    try:
        with pool.connection() as conn:
            setting, rows = conn.execute(PROBE).fetchone()
            return {"setting": setting, "rows": rows}
    except TenantLeakError as error:
        return {"refused": str(error), "settings": list(error.settings), "released_at": error.released_at}


def sequence(pool: Any, job: Any) -> List[Dict[str, Any]]:
    pool.open(wait=True, timeout=10)
    seen = []
    try:
        for tenant in (1, 2, 3):
            failed = False
            try:
                job(pool, tenant)
            except RuntimeError:
                failed = True
            seen.append({"tenant": tenant, "failed": failed, "next": probe(pool)})
    finally:
        pool.close()
    return seen


def single(url: str, **kwargs: Any) -> ConnectionPool:
    return ConnectionPool(url, min_size=1, max_size=1, open=False, **kwargs)


def proof_seed(url: str) -> Dict[str, Any]:
    reports: List[Dict[str, Any]] = []
    discard = guard_pool(single(url), settings=["app.tenant"], on_violation="discard", on_report=lambda r, a: reports.append({**r.to_dict(), "action": a}))
    guarded = guard_pool(single(url), settings=["app.tenant"])
    local = guard_pool(single(url), settings=["app.tenant"])
    return {
        "unguarded": sequence(single(url), seed_job),
        "guarded": sequence(guarded, seed_job),
        "guarded_stats": vars(guard_stats(guarded)),
        "discard": sequence(discard, seed_job),
        "discard_reports": reports,
        "local": sequence(local, local_job),
        "local_stats": vars(guard_stats(local)),
        "job_line": seed_job.__code__.co_firstlineno + 2,
    }


# ---- a tenant set where the job's code does not show it -------------------------------


def routine_job(pool: Any, tenant: int) -> None:
    """The job calls a routine; the routine sets the tenant for the session."""
    with pool.connection() as conn:
        conn.execute("select pgq_set_tenant(%s)", [tenant])


def trigger_job(pool: Any, tenant: int) -> None:
    """The job only inserts a row; a trigger on the table sets the tenant for the session."""
    with pool.connection() as conn:
        conn.execute("insert into jobs (tenant_id) values (%s)", [tenant])


def proof_hidden(url: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for name, job in (("routine", routine_job), ("trigger", trigger_job)):
        unguarded = single(url)
        guarded = guard_pool(single(url), settings=["app.tenant"])
        out[name] = {"unguarded": hidden_run(unguarded, job), "guarded": hidden_run(guarded, job)}
    return out


def hidden_run(pool: ConnectionPool, job: Any) -> Dict[str, Any]:
    pool.open(wait=True, timeout=10)
    try:
        job(pool, 2)
        return probe(pool)
    finally:
        pool.close()


# ---- round trips: the test counts them at its proxy --------------------------------------


def proof_round_trips(url: str, guarded: str, jobs: str) -> Dict[str, Any]:
    """`jobs` local-setting jobs on a pool of one, guarded or not; the test counts the
    ReadyForQuery messages the server sent (one per round trip)."""
    pool = single(url)
    if guarded == "guarded":
        pool = guard_pool(pool, settings=["app.tenant", "search_path"])
    pool.open(wait=True, timeout=10)
    try:
        for job in range(int(jobs)):
            local_job(pool, 1 if job % 2 else 3)
    finally:
        pool.close()
    return {"stats": vars(guard_stats(pool)) if guarded == "guarded" else None}


# ---- the same on AsyncConnectionPool ---------------------------------------------------


async def async_sequence(pool: AsyncConnectionPool) -> List[Dict[str, Any]]:
    await pool.open(wait=True, timeout=10)
    seen = []
    try:
        for tenant in (1, 2, 3):
            try:
                async with pool.connection() as conn:
                    await conn.execute("select set_config('app.tenant', %s, false)", [str(tenant)])
                    if tenant == 2:
                        raise RuntimeError("job 2 fails")
            except RuntimeError:
                pass
            try:
                async with pool.connection() as conn:
                    cur = await conn.execute(PROBE)
                    setting, rows = await cur.fetchone()
                    seen.append({"tenant": tenant, "next": {"setting": setting, "rows": rows}})
            except TenantLeakError as error:
                seen.append({"tenant": tenant, "next": {"refused": str(error), "settings": list(error.settings)}})
    finally:
        await pool.close()
    return seen


async def async_proofs(url: str) -> Dict[str, Any]:
    def pool() -> AsyncConnectionPool:
        return AsyncConnectionPool(url, min_size=1, max_size=1, open=False)

    guarded = guard_pool(pool(), settings=["app.tenant"])
    return {"unguarded": await async_sequence(pool()), "guarded": await async_sequence(guarded), "stats": vars(guard_stats(guarded))}


def proof_async(url: str) -> Dict[str, Any]:
    return asyncio.run(async_proofs(url))


# ---- a reset callback without autocommit (F7: 301 connections for 300 jobs) --------------


def reset_tenant(conn: psycopg.Connection) -> None:
    """The seed's reset: RESET app.tenant without autocommit, which leaves the connection INTRANS."""
    conn.execute("reset app.tenant")


def reset_autocommit(conn: psycopg.Connection) -> None:
    conn.autocommit = True
    conn.execute("reset app.tenant")
    conn.autocommit = False


def reset_jobs(url: str, reset: Any, jobs: int, reported: Optional[List[LeakReport]]) -> Dict[str, Any]:
    on_report = (lambda report, action: reported.append(report)) if reported is not None else None
    pool = guard_pool(single(url, reset=reset), settings=["app.tenant"], on_report=on_report)
    guard_log, pool_log = listen("pgq_audit.guard"), listen("psycopg.pool")
    pool.open(wait=True, timeout=10)
    try:
        for job in range(jobs):
            seed_job(pool, 1 if job % 2 else 3)  # the seed's successful jobs
        # With max_size=1 the next checkout waits for the last job's reset.
        with pool.connection():
            stats = pool.get_stats()
    finally:
        pool.close()
        logging.getLogger("pgq_audit.guard").removeHandler(guard_log)
        logging.getLogger("psycopg.pool").removeHandler(pool_log)
    return {
        "jobs": jobs,
        "connections": stats.get("connections_num", 0),
        "guard": vars(guard_stats(pool)),
        "guard_log": guard_log.messages,
        "pool_log": pool_log.messages,
        "reports": [r.to_dict() | {"message": r.message()} for r in reported or []],
    }


def proof_reset(url: str) -> Dict[str, Any]:
    return {
        "reported": reset_jobs(url, reset_tenant, 300, []),
        "logged": reset_jobs(url, reset_tenant, 20, None),
        "autocommit": reset_jobs(url, reset_autocommit, 300, []),
    }


# ---- 20 threads x 5,000 checkouts, 10 % of the jobs leaking ------------------------------


def proof_threads(url: str, owner_url: str, threads: int = 20, checkouts: int = 5000, size: int = 8) -> Dict[str, Any]:
    reports = 0
    lock = threading.Lock()

    def on_report(report: LeakReport, action: str) -> None:
        nonlocal reports
        with lock:
            reports += 1

    pool = guard_pool(
        ConnectionPool(url, min_size=size, max_size=size, open=False, timeout=60),
        settings=["app.tenant"],
        on_violation="discard",
        on_report=on_report,
    )
    pool.open(wait=True, timeout=30)
    counts = {"jobs": 0, "leaking_jobs": 0, "dirty_handouts": 0, "errors": 0}
    errors: List[str] = []

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        mine = {"jobs": 0, "leaking_jobs": 0, "dirty_handouts": 0, "errors": 0}
        for _ in range(checkouts):
            leak = rng.random() < 0.1
            tenant = str(rng.randint(1, 100))
            try:
                with pool.connection() as conn:
                    # What the job was handed, before it sets anything.
                    seen = conn.execute("select current_setting('app.tenant', true)").fetchone()[0]
                    if seen:
                        mine["dirty_handouts"] += 1
                    conn.execute("select set_config('app.tenant', %s, %s)", [tenant, not leak])
                mine["jobs"] += 1
                mine["leaking_jobs"] += leak
            except Exception as error:  # any failure is counted and shown, never hidden
                mine["errors"] += 1
                if len(errors) < 5:
                    errors.append(repr(error))
        with lock:
            for key, value in mine.items():
                counts[key] += value

    started = time.monotonic()
    workers = [threading.Thread(target=worker, args=(seed,)) for seed in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    seconds = time.monotonic() - started
    # Take every connection once more: a leak left by the last job on a connection is found too.
    held = [pool.getconn() for _ in range(size)]
    for conn in held:
        pool.putconn(conn)
    stats = pool.get_stats()
    with psycopg.connect(owner_url, autocommit=True) as owner:
        backends = owner.execute(
            "select count(*) from pg_stat_activity where datname = current_database() and usename = 'pgq_worker'"
        ).fetchone()[0]
    pool.close()
    return {
        "threads": threads,
        "checkouts_per_thread": checkouts,
        "seconds": round(seconds, 1),
        **counts,
        "errors_seen": errors,
        "reports": reports,
        "guard": vars(guard_stats(pool)),
        "pool_size": stats.get("pool_size"),
        "pool_available": stats.get("pool_available"),
        "server_backends": backends,
    }


# ---- the options at work ---------------------------------------------------------------


def leak_then_probe(pool: ConnectionPool) -> Dict[str, Any]:
    """Job 1 leaks tenant 7 for the session; the next job reports what it got."""
    pool.open(wait=True, timeout=10)
    try:
        seed_job(pool, 7)
        return probe(pool)
    except Exception as error:  # shown to the test, which asserts the type and message
        return {"error": type(error).__name__, "message": str(error)}
    finally:
        pool.close()


def proof_options(url: str) -> Dict[str, Any]:
    kept: List[str] = []
    keep = guard_pool(single(url), settings=["app.tenant"], on_violation=lambda r: "keep", on_report=lambda r, a: kept.append(a))
    bogus = guard_pool(single(url), settings=["app.tenant"], on_violation=lambda r: "ignore")
    values = guard_pool(single(url), settings=["app.tenant"], include_values=True)
    unsampled = guard_pool(single(url), settings=["app.tenant"], sample_rate=0)
    named = guard_pool(single(url), settings=["app.tenant"], job_name=lambda: "nightly-invoices")
    return {
        "keep": {**leak_then_probe(keep), "actions": kept, "stats": vars(guard_stats(keep))},
        "bogus": {**leak_then_probe(bogus), "stats": vars(guard_stats(bogus))},
        "values": leak_then_probe(values),
        "unsampled": {**leak_then_probe(unsampled), "stats": vars(guard_stats(unsampled))},
        "named": leak_then_probe(named),
        "misspelt": misspelt_setting(url),
        "configure": with_configure(url),
    }


def configure_search_path(conn: psycopg.Connection) -> None:
    """The user's configure= callback: a search_path per connection, committed."""
    conn.execute("set search_path to public")
    conn.commit()


def with_configure(url: str) -> Dict[str, Any]:
    """The values at connect are read after the user's configure=: its search_path is the
    baseline, not a leak; a job that changes it for the session is refused."""
    pool = guard_pool(single(url, configure=configure_search_path), settings=["app.tenant", "search_path"])
    pool.open(wait=True, timeout=10)
    seen: List[Any] = []
    try:
        for _ in range(3):
            local_job(pool, 1)
            seen.append(probe(pool))
        with pool.connection() as conn:
            conn.execute("set search_path to pg_catalog, public")
        seen.append(probe(pool))
    finally:
        pool.close()
    return {"seen": seen, "stats": vars(guard_stats(pool))}


def misspelt_setting(url: str) -> Dict[str, Any]:
    """A misspelt built-in name: the read at connect fails, so the pool gets no connection
    and logs PostgreSQL's error, instead of the guard always matching."""
    pool = guard_pool(single(url), settings=["serach_path"])
    log = listen("psycopg.pool")
    try:
        pool.open(wait=True, timeout=3)
        opened = True
    except psycopg_pool.PoolTimeout:
        opened = False
    finally:
        pool.close()
        logging.getLogger("psycopg.pool").removeHandler(log)
    return {"opened": opened, "pool_log": log.messages[:2]}


# ---- a server restart mid-run ---------------------------------------------------------


def proof_restart(url: str, jobs_before: int = 200, jobs_after: int = 300) -> Dict[str, Any]:
    """8 threads run jobs (1 in 10 leaking) on a guarded pool of 4 through the test's proxy.
    After `jobs_before` jobs this prints {"event": "restart"} and the test terminates every
    backend and refuses new connections, then answers "up" on stdin; the run goes on until
    `jobs_after` jobs have succeeded after that, or a bound."""
    reports = 0
    lock = threading.Lock()

    def on_report(report: LeakReport, action: str) -> None:
        nonlocal reports
        with lock:
            reports += 1

    pool = guard_pool(
        ConnectionPool(url, min_size=4, max_size=4, open=False, timeout=2, reconnect_timeout=60),
        settings=["app.tenant"],
        on_violation="discard",
        on_report=on_report,
    )
    pool.open(wait=True, timeout=30)
    phase = "before"
    done = {"before": 0, "down": 0, "after": 0}
    dirty = 0
    failures: Dict[str, int] = {}
    leak_errors: List[str] = []
    failed_before: List[str] = []
    restarted = threading.Event()

    def worker(seed: int) -> None:
        nonlocal dirty
        rng = random.Random(seed)
        for _ in range(20_000):  # bounded: a pool that never recovers ends the run
            if done["after"] >= jobs_after:
                return
            leak = rng.random() < 0.1
            mine = phase
            try:
                with pool.connection() as conn:
                    if conn.execute("select current_setting('app.tenant', true)").fetchone()[0]:
                        with lock:
                            dirty += 1
                    conn.execute("select set_config('app.tenant', %s, %s)", [str(rng.randint(1, 100)), not leak])
                with lock:
                    done[mine] += 1
                    if done["before"] >= jobs_before and not restarted.is_set():
                        restarted.set()
            except Exception as error:
                name = type(error).__name__
                with lock:
                    failures[name] = failures.get(name, 0) + 1
                    if isinstance(error, TenantLeakError):
                        leak_errors.append(str(error))
                    if phase == "before":  # failed before the restart was asked for
                        failed_before.append(repr(error))
                if mine != "after":
                    time.sleep(0.05)

    workers = [threading.Thread(target=worker, args=(seed,)) for seed in range(8)]
    for t in workers:
        t.start()
    restarted.wait(timeout=120)
    phase = "down"
    print(json.dumps({"event": "restart"}), flush=True)
    sys.stdin.readline()  # the test answers once the server accepts connections again
    phase = "after"
    started = time.monotonic()
    for t in workers:
        t.join()
    recovered = time.monotonic() - started
    pool.wait(timeout=30)  # the last discarded connections are being replaced
    stats = pool.get_stats()
    pool.close()
    return {
        "done": done,
        "dirty_handouts": dirty,
        "failures": failures,
        "leak_errors": leak_errors[:3],
        "failed_before": failed_before[:3],
        "reports": reports,
        "guard": vars(guard_stats(pool)),
        "seconds_after_up": round(recovered, 1),
        "pool_size": stats.get("pool_size"),
        "pool_available": stats.get("pool_available"),
    }


def main() -> None:
    proof, url, *rest = sys.argv[1:]
    result = globals()[f"proof_{proof}"](url, *rest)
    print(json.dumps({**versions(), "result": result}))


if __name__ == "__main__":
    main()
