"""SQLAlchemy engines, sync and asyncio (1.4 and later): the check runs in the
pool's "checkout" event, the values at connect are read in its "connect"
event, and the release site is taken in its "checkin" event (after
SQLAlchemy's reset-on-return has rolled back). State lives in the connection
record's info dict, which SQLAlchemy clears when it invalidates a connection.

A refused connection: "raise" raises TenantLeakError out of the checkout
event, and SQLAlchemy invalidates (closes) the connection before it
propagates; "discard" raises DisconnectionError, on which SQLAlchemy closes
it, opens a new one and runs the checkout again (once).

The DBAPI connection is read with its driver's own module: psycopg2 and
psycopg 3 directly; SQLAlchemy's asyncio adapters (asyncpg, psycopg async)
through driver_connection and await_only, since pool events run inside
SQLAlchemy's greenlet.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Tuple

from sqlalchemy import event, exc

from .._core import Guard
from .._report import OpenTransaction, TenantLeakError

STATE = "pgq_audit.guard"

Reader = Tuple[Callable[[Any], OpenTransaction], Callable[[Any, str], Optional[Sequence[Any]]], Callable[[Any], Optional[int]]]


def _module(obj: Any) -> str:
    return type(obj).__module__.split(".", 1)[0]


def _reader(dbapi_connection: Any) -> Tuple[Any, Reader]:
    """(the connection to read, (status, read, pid)) for this DBAPI connection."""
    driver = getattr(dbapi_connection, "driver_connection", None)
    if driver is not None and driver is not dbapi_connection:
        from sqlalchemy.util import await_only

        if _module(driver) == "asyncpg":
            from . import asyncpg

            return driver, (asyncpg.open_transaction, lambda c, sql: await_only(asyncpg.read(c, sql)), asyncpg.backend_pid)
        from . import psycopg

        return driver, (psycopg.open_transaction, lambda c, sql: await_only(psycopg.read_async(c, sql)), psycopg.backend_pid)
    if _module(dbapi_connection) == "psycopg":
        from . import psycopg

        return dbapi_connection, (psycopg.open_transaction, psycopg.read, psycopg.backend_pid)
    from . import psycopg2

    return dbapi_connection, (psycopg2.open_transaction, psycopg2.read, psycopg2.backend_pid)


def install(engine: Any, guard: Guard) -> None:
    pool = engine.pool

    def on_connect(dbapi_connection: Any, record: Any) -> None:
        conn, (status, read, _pid) = _reader(dbapi_connection)
        if status(conn) is None:
            guard.count("checks")
            row = read(conn, guard.sql)
            if row is not None:
                record.info[STATE] = guard.connected(row)

    def on_checkout(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        guard.count("checkouts")
        state = record.info.get(STATE)
        if state is not None and not state.check_next:
            return
        conn, (status, read, pid) = _reader(dbapi_connection)
        tx = status(conn)
        row = None
        if tx != "E":
            guard.count("checks")
            try:
                row = read(conn, guard.sql)
            except BaseException:
                guard.count("check_errors")
                raise  # SQLAlchemy invalidates the connection; the checkout raises the driver's error
            if row is None:
                tx = "E"
        state, report = guard.judge(state, tx, row, pid(conn))
        record.info[STATE] = state
        if report is None:
            return
        action = guard.action(report)
        if action == "keep":
            return
        record.info.pop(STATE, None)
        if action == "discard":
            raise exc.DisconnectionError(report.message())
        raise TenantLeakError(report)

    def on_checkin(dbapi_connection: Any, record: Any) -> None:
        state = record.info.get(STATE) if record is not None else None
        if state is not None:
            guard.released(state, "checkin")

    event.listen(pool, "connect", on_connect)
    # First among checkout listeners: a listener that sets per-checkout state is not a leak.
    event.listen(pool, "checkout", on_checkout, insert=True)
    event.listen(pool, "checkin", on_checkin)
