"""Proofs of pgq_audit.guard on SQLAlchemy engines (Debian's SQLAlchemy 1.4 with
psycopg2, and asyncio with asyncpg) and on asyncpg pools (Debian's 0.27).

    /usr/bin/python3 sqlalchemy_asyncpg_proofs.py <proof> <worker-url> [owner-url]
Prints one JSON object; the Node tests assert.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import sys
from typing import Any, Dict, List

import asyncpg
import sqlalchemy
from sqlalchemy import create_engine, text
from sqlalchemy.ext.asyncio import create_async_engine

from pgq_audit.guard import TenantLeakError, guard_pool, guard_stats

PROBE = "select current_setting('app.tenant', true), (select count(*) from invoices)"


def versions() -> Dict[str, str]:
    return {"sqlalchemy": sqlalchemy.__version__, "asyncpg": asyncpg.__version__}


def refused(error: TenantLeakError) -> Dict[str, Any]:
    return {"refused": str(error), "settings": list(error.settings), "released_at": error.released_at}


# ---- SQLAlchemy, sync (psycopg2) ----------------------------------------------------


def sa_sequence(engine: Any) -> List[Dict[str, Any]]:
    seen = []
    for tenant in (1, 2, 3):
        try:
            with engine.begin() as conn:  # commits, or rolls back on error
                conn.execute(text("select set_config('app.tenant', :t, false)"), {"t": str(tenant)})
                if tenant == 2:
                    raise RuntimeError("job 2 fails")
        except RuntimeError:
            pass
        try:
            with engine.connect() as conn:
                setting, rows = conn.execute(text(PROBE)).one()
                seen.append({"tenant": tenant, "next": {"setting": setting, "rows": rows}})
        except TenantLeakError as error:
            seen.append({"tenant": tenant, "next": refused(error)})
    engine.dispose()
    return seen


def proof_sqlalchemy(url: str) -> Dict[str, Any]:
    sa_url = url.replace("postgres://", "postgresql+psycopg2://", 1)

    def engine() -> Any:
        return create_engine(sa_url, pool_size=1, max_overflow=0)

    reports: List[Dict[str, Any]] = []
    guarded = guard_pool(engine(), settings=["app.tenant"])
    discard = guard_pool(engine(), settings=["app.tenant"], on_violation="discard", on_report=lambda r, a: reports.append(r.to_dict()))
    return {
        "unguarded": sa_sequence(engine()),
        "guarded": sa_sequence(guarded),
        "guarded_stats": vars(guard_stats(guarded)),
        "discard": sa_sequence(discard),
        "discard_reports": reports,
    }


# ---- SQLAlchemy, asyncio (asyncpg) ---------------------------------------------------


JOB: "contextvars.ContextVar[str]" = contextvars.ContextVar("job", default="")


async def sa_async_sequence(engine: Any) -> List[Dict[str, Any]]:
    seen = []
    for tenant in (1, 2, 3):
        JOB.set(f"invoice-export tenant job {tenant}")
        try:
            async with engine.begin() as conn:
                await conn.execute(text("select set_config('app.tenant', :t, false)"), {"t": str(tenant)})
                if tenant == 2:
                    raise RuntimeError("job 2 fails")
        except RuntimeError:
            pass
        try:
            async with engine.connect() as conn:
                setting, rows = (await conn.execute(text(PROBE))).one()
                seen.append({"tenant": tenant, "next": {"setting": setting, "rows": rows}})
        except TenantLeakError as error:
            seen.append({"tenant": tenant, "next": refused(error)})
    await engine.dispose()
    return seen


async def sa_async(url: str) -> Dict[str, Any]:
    sa_url = url.replace("postgres://", "postgresql+asyncpg://", 1)

    def engine() -> Any:
        return create_async_engine(sa_url, pool_size=1, max_overflow=0)

    guarded = guard_pool(engine(), settings=["app.tenant"], job_name=JOB.get)
    return {
        "unguarded": await sa_async_sequence(engine()),
        "guarded": await sa_async_sequence(guarded),
        "guarded_stats": vars(guard_stats(guarded)),
    }


def proof_sqlalchemy_async(url: str) -> Dict[str, Any]:
    return asyncio.run(sa_async(url))


# ---- asyncpg pools: what its reset clears, and what it does not ----------------------

ROLE_PROBE = "select current_setting('app.tenant', true), current_user::text, session_user::text"


async def asyncpg_job(url: str, guarded: bool, statement: str) -> Dict[str, Any]:
    """One job runs `statement` on a fresh pool of one; the job after it sets nothing and reports."""
    pool = asyncpg.create_pool(url, min_size=1, max_size=1)
    if guarded:
        # Before the pool is awaited: the guard reads each connection's values at connect.
        pool = guard_pool(pool, settings=["app.tenant", "role", "session_authorization"])
    await pool
    try:
        async with pool.acquire() as conn:
            await conn.execute(statement)
        try:
            async with pool.acquire() as conn:
                setting, user, session_user = await conn.fetchrow(ROLE_PROBE)
                seen: Dict[str, Any] = {"setting": setting, "user": user, "session_user": session_user}
        except TenantLeakError as error:
            seen = refused(error)
        return {"job": statement, "next": seen, "stats": vars(guard_stats(pool)) if guarded else None}
    finally:
        await pool.close()


async def asyncpg_jobs(url: str, guarded: bool, statements: List[str]) -> List[Dict[str, Any]]:
    return [await asyncpg_job(url, guarded, statement) for statement in statements]


async def asyncpg_proofs(url: str, owner_url: str) -> Dict[str, Any]:
    worker_jobs = [
        "select set_config('app.tenant', '1', false)",
        "set role pgq_tenant_role",
        "select set_config('role', 'pgq_tenant_role', false)",
        "begin; set local role pgq_tenant_role; commit",
    ]
    owner_jobs = ["set session authorization pgq_worker"]
    return {
        "unguarded": await asyncpg_jobs(url, False, worker_jobs),
        "guarded": await asyncpg_jobs(url, True, worker_jobs),
        "owner_unguarded": await asyncpg_jobs(owner_url, False, owner_jobs),
        "owner_guarded": await asyncpg_jobs(owner_url, True, owner_jobs),
    }


def proof_asyncpg(url: str, owner_url: str) -> Dict[str, Any]:
    return asyncio.run(asyncpg_proofs(url, owner_url))


def main() -> None:
    proof, url, *rest = sys.argv[1:]
    result = globals()[f"proof_{proof}"](url, *rest)
    print(json.dumps({**versions(), "result": result}))


if __name__ == "__main__":
    main()
