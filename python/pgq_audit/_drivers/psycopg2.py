"""psycopg2 connections (SQLAlchemy's default PostgreSQL driver in 1.4): the
transaction status from libpq, and the check in one round trip.

Outside autocommit psycopg2 sends BEGIN before the first query and leaves the
transaction open; an idle connection is read in autocommit, which psycopg2
switches without a round trip (PostgreSQL >= 8.0), and put back as it was.
Without parameters psycopg2 sends the simple protocol (PQexec).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from .._report import OpenTransaction

# psycopg2.extensions.TRANSACTION_STATUS_*: libpq's PGTransactionStatusType.
_IDLE, _INTRANS, _INERROR = 0, 2, 3


def open_transaction(conn: Any) -> OpenTransaction:
    status = conn.get_transaction_status()
    return "T" if status == _INTRANS else "E" if status == _INERROR else None


def backend_pid(conn: Any) -> Optional[int]:
    try:
        return int(conn.get_backend_pid()) or None
    except Exception:
        return None


def read(conn: Any, sql: str) -> Sequence[Any]:
    switch = conn.get_transaction_status() == _IDLE and not conn.autocommit
    if switch:
        conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            row = cur.fetchone()
    finally:
        if switch and conn.get_transaction_status() == _IDLE:
            conn.autocommit = False
    if row is None:
        raise RuntimeError("pgq-audit guard: the check query returned no row")
    return row
