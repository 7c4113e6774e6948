"""The runtime checkout guard for Python workers.

A pooled connection that a job returned with a tenant setting still set (or a
transaction still open) is refused at its next checkout, with the code
location of the job that returned it::

    from psycopg_pool import ConnectionPool
    from pgq_audit.guard import guard_pool, TenantLeakError

    pool = guard_pool(ConnectionPool(conninfo), settings=["app.tenant"])

guard_pool() takes a psycopg_pool ConnectionPool or AsyncConnectionPool, a
SQLAlchemy Engine or AsyncEngine, or an asyncpg Pool, and returns the same
object. It imports only the driver of the pool it is given.
Documentation: docs/guard.md, "Python workers".
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Set, TypeVar, Union

from ._core import GUARD_ATTRIBUTE, Guard
from ._options import ReportHandler, ViolationHandler, resolve_options
from ._report import GuardStats, LeakReport, TenantLeakError

__all__ = ["guard_pool", "guard_stats", "GuardStats", "LeakReport", "TenantLeakError"]

P = TypeVar("P")


def _packages(pool: Any) -> Set[str]:
    return {cls.__module__.split(".", 1)[0] for cls in type(pool).__mro__}


def guard_pool(
    pool: P,
    *,
    settings: Sequence[str],
    on_violation: Union[str, ViolationHandler] = "raise",
    on_report: Optional[ReportHandler] = None,
    include_values: bool = False,
    sample_rate: float = 1.0,
    enabled: bool = True,
    job_name: Optional[Callable[[], Optional[str]]] = None,
) -> P:
    """Guards a pool: every checkout asserts that no setting in `settings` differs from
    its value at connect and that no transaction is open, and refuses the connection
    otherwise. Returns the same pool.

    - on_violation: "raise" (TenantLeakError; the connection is closed), "discard" (closed,
      reported to on_report, and the caller gets a clean connection), or a function
      (report) -> "raise" | "discard" | "keep" | None (None: "discard"); async with an async pool.
    - on_report: (report, action) -> None, for every violation; required with "discard".
    - include_values: put the settings' values in reports and errors (off: tenant ids can be personal data).
    - sample_rate: share of checkouts that are checked, 0..1 (a new connection's values are always read).
    - enabled: False returns the pool untouched (the options are still validated).
    - job_name: () -> str | None, called at each release the next check looks at (e.g. from a ContextVar).
    """
    options = resolve_options(settings, on_violation, on_report, include_values, sample_rate, job_name)
    if not isinstance(enabled, bool):
        raise TypeError(f'pgq-audit guard: option "enabled" must be True or False (got {enabled!r})')
    packages = _packages(pool)
    if not packages & {"psycopg_pool", "sqlalchemy", "asyncpg"}:
        raise TypeError(
            "pgq-audit guard: guard_pool() needs a psycopg_pool ConnectionPool or AsyncConnectionPool, "
            f"a SQLAlchemy Engine or AsyncEngine, or an asyncpg Pool (got {type(pool).__module__}.{type(pool).__qualname__})"
        )
    if not enabled:
        return pool
    target: Any = getattr(pool, "sync_engine", pool)  # SQLAlchemy's AsyncEngine wraps a sync Engine
    if getattr(target, GUARD_ATTRIBUTE, None) is not None:
        raise RuntimeError("pgq-audit guard: this pool is already guarded; call guard_pool() once per pool")
    guard = Guard(options)
    if "psycopg_pool" in packages:
        from psycopg_pool import AsyncConnectionPool

        from ._drivers import psycopg_pool

        psycopg_pool.install(pool, guard, is_async=isinstance(pool, AsyncConnectionPool))
    elif "sqlalchemy" in packages:
        from ._drivers import sqlalchemy

        sqlalchemy.install(target, guard)
    else:
        from ._drivers import asyncpg

        asyncpg.install(pool, guard)  # asyncpg's Pool has __slots__: the guard lives on its new class
        return pool
    setattr(target, GUARD_ATTRIBUTE, guard)
    return pool


def guard_stats(pool: Any) -> Optional[GuardStats]:
    """Counters of a guarded pool (a copy), or None for a pool guard_pool() did not wrap."""
    guard = getattr(getattr(pool, "sync_engine", pool), GUARD_ATTRIBUTE, None)
    if not isinstance(guard, Guard):
        return None
    with guard._lock:
        return GuardStats(**vars(guard.stats))
