"""psycopg_pool (3.1 and later): ConnectionPool and AsyncConnectionPool.

getconn() and putconn() are replaced on the pool instance, so the caller keeps
the same object and connection(), which calls self.getconn()/self.putconn(),
goes through the check. The pool's configure and reset callbacks (the
private attributes _configure and _reset, where psycopg_pool 3.1 to 3.2 keep
the functions passed as configure= and reset=) are wrapped, not replaced:
the user's callback runs first, then the guard reads the values at connect,
or notes that the reset left a transaction open. The user's check= (3.2)
runs inside the pool's own getconn(), before the guard looks.
"""

from __future__ import annotations

import functools
from time import monotonic
from typing import Any, Callable, Optional

from psycopg import pq

from .._core import Guard
from .._report import LeakReport, TenantLeakError
from . import psycopg as driver

#: The guard's state on each connection (psycopg connections take attributes).
STATE = "_pgq_audit_state"
_IDLE = pq.TransactionStatus.IDLE


def _name(function: Callable[..., Any]) -> str:
    code = getattr(function, "__code__", None)
    name = getattr(function, "__qualname__", None) or repr(function)
    return f"{name} ({code.co_filename}:{code.co_firstlineno})" if code is not None else name


def _remaining(deadline: Optional[float]) -> Optional[float]:
    return None if deadline is None else max(deadline - monotonic(), 0.001)


def install(pool: Any, guard: Guard, is_async: bool) -> None:
    (_install_async if is_async else _install_sync)(pool, guard)


def _reset_report(guard: Guard, conn: Any, reset: Callable[..., Any]) -> None:
    tx = driver.open_transaction(conn)
    if tx is not None:
        guard.reset_left_transaction(
            LeakReport(
                settings=[],
                transaction=tx,
                settings_read=False,
                backend_pid=driver.backend_pid(conn),
                reset_function=_name(reset),
            )
        )


def _install_sync(pool: Any, guard: Guard) -> None:
    original_getconn = pool.getconn
    original_putconn = pool.putconn
    tries = pool.max_size + 1

    if hasattr(pool, "_configure"):
        user_configure = pool._configure

        def configure(conn: Any) -> None:
            if user_configure is not None:
                user_configure(conn)
            # A configure that left a transaction open: the pool refuses the connection itself.
            if conn.pgconn.transaction_status == _IDLE:
                guard.count("checks")
                setattr(conn, STATE, guard.connected(driver.read(conn, guard.sql)))

        if user_configure is not None:
            functools.update_wrapper(configure, user_configure)
        pool._configure = configure

    # Only a pool that has a reset callback: without one psycopg_pool returns
    # connections inline, with one in a worker thread.
    user_reset = getattr(pool, "_reset", None)
    if user_reset is not None:

        @functools.wraps(user_reset)
        def reset(conn: Any) -> None:
            user_reset(conn)
            _reset_report(guard, conn, user_reset)

        pool._reset = reset

    def destroy(conn: Any) -> None:
        setattr(conn, STATE, None)
        try:
            conn.close()
        finally:
            original_putconn(conn)  # a closed connection: the pool replaces it

    def inspect(conn: Any) -> Optional[LeakReport]:
        guard.count("checkouts")
        state = getattr(conn, STATE, None)
        if state is not None and not state.check_next:
            return None
        tx = driver.open_transaction(conn)
        row = None
        if tx != "E":  # a failed transaction answers every query with 25P02
            guard.count("checks")
            try:
                row = driver.read(conn, guard.sql)
            except BaseException:
                guard.count("check_errors")
                destroy(conn)
                raise
        state, report = guard.judge(state, tx, row, driver.backend_pid(conn))
        setattr(conn, STATE, state)
        return report

    def getconn(timeout: Optional[float] = None) -> Any:
        deadline = None if timeout is None else monotonic() + timeout
        for attempt in range(tries):
            conn = original_getconn(timeout=_remaining(deadline))
            report = inspect(conn)
            if report is None:
                return conn
            try:
                action = guard.action(report)
            except BaseException:
                destroy(conn)
                raise
            if action == "keep":
                return conn
            destroy(conn)
            if action == "discard" and attempt + 1 < tries:
                continue
            raise TenantLeakError(report)
        raise AssertionError("unreachable")

    def putconn(conn: Any) -> None:
        state = getattr(conn, STATE, None)
        if state is not None:
            guard.released(state, "putconn")
        original_putconn(conn)

    functools.update_wrapper(getconn, original_getconn)
    functools.update_wrapper(putconn, original_putconn)
    pool.getconn = getconn
    pool.putconn = putconn


def _install_async(pool: Any, guard: Guard) -> None:
    original_getconn = pool.getconn
    original_putconn = pool.putconn
    tries = pool.max_size + 1

    if hasattr(pool, "_configure"):
        user_configure = pool._configure

        async def configure(conn: Any) -> None:
            if user_configure is not None:
                await user_configure(conn)
            if conn.pgconn.transaction_status == _IDLE:
                guard.count("checks")
                setattr(conn, STATE, guard.connected(await driver.read_async(conn, guard.sql)))

        if user_configure is not None:
            functools.update_wrapper(configure, user_configure)
        pool._configure = configure

    user_reset = getattr(pool, "_reset", None)
    if user_reset is not None:

        @functools.wraps(user_reset)
        async def reset(conn: Any) -> None:
            await user_reset(conn)
            _reset_report(guard, conn, user_reset)

        pool._reset = reset

    async def destroy(conn: Any) -> None:
        setattr(conn, STATE, None)
        try:
            await conn.close()
        finally:
            await original_putconn(conn)

    async def inspect(conn: Any) -> Optional[LeakReport]:
        guard.count("checkouts")
        state = getattr(conn, STATE, None)
        if state is not None and not state.check_next:
            return None
        tx = driver.open_transaction(conn)
        row = None
        if tx != "E":
            guard.count("checks")
            try:
                row = await driver.read_async(conn, guard.sql)
            except BaseException:
                guard.count("check_errors")
                await destroy(conn)
                raise
        state, report = guard.judge(state, tx, row, driver.backend_pid(conn))
        setattr(conn, STATE, state)
        return report

    async def getconn(timeout: Optional[float] = None) -> Any:
        deadline = None if timeout is None else monotonic() + timeout
        for attempt in range(tries):
            conn = await original_getconn(timeout=_remaining(deadline))
            report = await inspect(conn)
            if report is None:
                return conn
            try:
                action = await guard.action_async(report)
            except BaseException:
                await destroy(conn)
                raise
            if action == "keep":
                return conn
            await destroy(conn)
            if action == "discard" and attempt + 1 < tries:
                continue
            raise TenantLeakError(report)
        raise AssertionError("unreachable")

    async def putconn(conn: Any) -> None:
        state = getattr(conn, STATE, None)
        if state is not None:
            guard.released(state, "putconn")
        await original_putconn(conn)

    functools.update_wrapper(getconn, original_getconn)
    functools.update_wrapper(putconn, original_putconn)
    pool.getconn = getconn
    pool.putconn = putconn
