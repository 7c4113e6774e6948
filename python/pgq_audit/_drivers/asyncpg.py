"""asyncpg: Pool, and the reader SQLAlchemy's asyncpg dialect uses.

asyncpg's Pool.release() runs Connection.reset(): ROLLBACK when a
transaction is open, then RESET ALL among others. That clears custom
settings and search_path, not the role: SET ROLE and SET SESSION
AUTHORIZATION reach the next job (test/proofs/py-asyncpg-reset.test.ts). So
the check matters for 'role' and 'session_authorization', and for anything
the reset misses when a pool replaces it.

asyncpg's Pool has __slots__, so the guard cannot put methods on the
instance. It wraps the pool's init= and setup= callbacks (the slots _init and
_setup, copied into each connection holder at initialisation) and gives the
same pool object a subclass of its class (no new slots, so the layout holds)
whose _acquire() retries a discarded connection and whose release() records
the caller. The check runs in the setup wrapper, before the user's own
setup=: a setup that sets per-acquire state is not a leak.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Awaitable, Callable, Optional, Sequence

from .._core import GUARD_ATTRIBUTE, ConnectionState, Guard
from .._report import LeakReport, OpenTransaction, TenantLeakError


def open_transaction(conn: Any) -> OpenTransaction:
    # asyncpg does not tell a failed transaction from an open one: the read says (25P02).
    return "T" if conn.is_in_transaction() else None


def backend_pid(conn: Any) -> Optional[int]:
    try:
        return int(conn.get_server_pid()) or None
    except Exception:
        return None


async def read(conn: Any, sql: str) -> Optional[Sequence[Any]]:
    """The settings, or None when a failed transaction answers 25P02. asyncpg caches the
    statement after its first use on a connection: later checks are one round trip."""
    from asyncpg.exceptions import InFailedSQLTransactionError

    try:
        row = await conn.fetchrow(sql)
    except InFailedSQLTransactionError:
        return None
    if row is None:
        raise RuntimeError("pgq-audit guard: the check query returned no row")
    return tuple(row)


class _Refused(Exception):
    """Raised out of the setup wrapper so asyncpg closes the connection; _acquire decides."""

    def __init__(self, report: LeakReport, action: str) -> None:
        super().__init__(report.message())
        self.report = report
        self.action = action


def install(pool: Any, guard: Guard) -> None:
    states: "weakref.WeakKeyDictionary[Any, ConnectionState]" = weakref.WeakKeyDictionary()
    tries = pool._maxsize + 1
    base = type(pool)

    user_init: Optional[Callable[[Any], Awaitable[None]]] = pool._init

    async def init(conn: Any) -> None:
        if user_init is not None:
            await user_init(conn)
        if not conn.is_in_transaction():
            guard.count("checks")
            row = await read(conn, guard.sql)
            if row is not None:
                states[conn] = guard.connected(row)

    if user_init is not None:
        functools.update_wrapper(init, user_init)
    pool._init = init

    user_setup: Optional[Callable[[Any], Awaitable[None]]] = pool._setup

    async def setup(proxy: Any) -> None:
        conn = proxy._con  # the pooled Connection behind this acquire's proxy
        guard.count("checkouts")
        state = states.get(conn)
        if state is None or state.check_next:
            tx = open_transaction(conn)
            guard.count("checks")
            try:
                row = await read(conn, guard.sql)
            except BaseException:
                guard.count("check_errors")
                raise  # asyncpg closes the connection and the acquire raises the driver's error
            if row is None:
                tx = "E"
            state, report = guard.judge(state, tx, row, backend_pid(conn))
            states[conn] = state
            if report is not None:
                action = await guard.action_async(report)
                if action != "keep":
                    states.pop(conn, None)
                    raise _Refused(report, action)
        if user_setup is not None:
            await user_setup(proxy)

    if user_setup is not None:
        functools.update_wrapper(setup, user_setup)
    pool._setup = setup
    for holder in getattr(pool, "_holders", []):  # an initialised pool copied the old setup= into its holders
        holder._setup = setup

    async def _acquire(self: Any, timeout: Optional[float]) -> Any:
        for attempt in range(tries):
            try:
                return await base._acquire(self, timeout)
            except _Refused as refused:
                if refused.action == "discard" and attempt + 1 < tries:
                    continue
                raise TenantLeakError(refused.report) from None
        raise AssertionError("unreachable")

    async def release(self: Any, connection: Any, *, timeout: Optional[float] = None) -> None:
        conn = getattr(connection, "_con", None)
        state = states.get(conn) if conn is not None else None
        if state is not None:
            guard.released(state, "release")
        return await base.release(self, connection, timeout=timeout)

    guarded = type(
        base.__name__,
        (base,),
        {"__slots__": (), "__module__": base.__module__, "_acquire": _acquire, "release": release, GUARD_ATTRIBUTE: guard},
    )
    functools.update_wrapper(release, base.release)
    pool.__class__ = guarded
