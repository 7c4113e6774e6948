"""psycopg 3 connections: the transaction status without a query, and the check
in one round trip.

psycopg outside autocommit sends BEGIN before a query (a round trip of its
own) and leaves the transaction open after it (another, to end it). An idle
connection is therefore read in autocommit for the one query, which psycopg
switches without a round trip, and put back as it was. The query goes with
prepare=False and no parameters: psycopg then uses the simple protocol and
never prepares it, so a reset that runs DISCARD ALL cannot break it.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from psycopg import pq
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
    idle = conn.pgconn.transaction_status == _IDLE
    switch = idle and not conn.autocommit
    if switch:
        conn.autocommit = True
    try:
        with conn.cursor(row_factory=tuple_row) as cur:
            cur.execute(sql, prepare=False)
            row = cur.fetchone()
    finally:
        # A broken connection refuses the switch back; it is closed by the caller anyway.
        if switch and conn.pgconn.transaction_status == _IDLE:
            conn.autocommit = False
    if row is None:
        raise RuntimeError("pgq-audit guard: the check query returned no row")
    return row


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
