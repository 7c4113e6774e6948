"""psycopg 3 connections: the transaction status without a query, and the check
in one round trip.

Through a cursor, psycopg outside autocommit sends BEGIN before a query (a
round trip of its own) and leaves the transaction open after it (another, to
end it). A sync connection is therefore read with libpq's PQexec
(conn.pgconn.exec_): one simple-protocol query, no BEGIN, nothing prepared,
and a third of the cost of a cursor (44 against 140 µs here). libpq leaves
the transaction status to psycopg, which reads it from libpq too. An async
connection cannot block on PQexec: it is read through a cursor in
autocommit, which psycopg switches without a round trip, with prepare=False
(the simple protocol; never prepared, so a reset's DISCARD ALL cannot break
it), and put back as it was.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from psycopg import errors, pq
from psycopg.rows import tuple_row

from .._report import OpenTransaction

_IDLE = pq.TransactionStatus.IDLE
_INTRANS = pq.TransactionStatus.INTRANS
_INERROR = pq.TransactionStatus.INERROR


def open_transaction(conn: Any) -> OpenTransaction:
    status = conn.pgconn.transaction_status
    if status == _INTRANS:
        return "T"
    if status == _INERROR:
        return "E"
    return None


def backend_pid(conn: Any) -> Optional[int]:
    try:
        return int(conn.info.backend_pid) or None
    except Exception:
        return None


def read(conn: Any, sql: str) -> Sequence[Any]:
    result = conn.pgconn.exec_(sql.encode())  # raises OperationalError when the connection is gone
    encoding = conn.info.encoding
    if result.status != pq.ExecStatus.TUPLES_OK:
        if conn.pgconn.status == pq.ConnStatus.BAD:  # lost: the class psycopg's own queries raise then
            raise errors.OperationalError(pq.error_message(result, encoding=encoding) or "the connection is lost")
        raise errors.error_from_result(result, encoding=encoding)
    if result.ntuples < 1:
        raise RuntimeError("pgq-audit guard: the check query returned no row")
    values = [result.get_value(0, i) for i in range(result.nfields)]
    return tuple(None if v is None else bytes(v).decode(encoding) for v in values)


async def read_async(conn: Any, sql: str) -> Sequence[Any]:
    idle = conn.pgconn.transaction_status == _IDLE
    switch = idle and not conn.autocommit
    if switch:
        await conn.set_autocommit(True)
    try:
        async with conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(sql, prepare=False)
            row = await cur.fetchone()
    finally:
        if switch and conn.pgconn.transaction_status == _IDLE:
            await conn.set_autocommit(False)
    if row is None:
        raise RuntimeError("pgq-audit guard: the check query returned no row")
    return row
