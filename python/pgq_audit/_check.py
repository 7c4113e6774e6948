"""The check itself: one SQL text, read in one round trip, and the comparison
of what it returns with the connection's values at connect.

Every driver guarded here reports the transaction status without a query
(psycopg's and psycopg2's libpq status, asyncpg's is_in_transaction()), so
the text reads the settings only (src/guard/check.ts has the same plan).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def check_sql(names: Sequence[str]) -> str:
    """A custom setting (a dotted name) is read with missing_ok, since a never-touched
    placeholder raises otherwise; a built-in one without it, so a misspelt name fails
    loudly instead of always matching."""
    columns = [
        f"current_setting({_literal(name)}, true)" if "." in name else f"current_setting({_literal(name)})"
        for name in names
    ]
    return "select " + ", ".join(columns)


def normalize(value: Any) -> str:
    """NULL and '' are the same "unset": a custom setting reads '' once its local
    transaction has ended (measured on PostgreSQL 17.10)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf8")
    return str(value)


def baseline_from(names: Sequence[str], row: Sequence[Any], adopted: bool) -> List[str]:
    """Values at connect. A connection opened before the guard wrapped the pool:
    custom settings are compared with "unset"; a built-in's current value is all we have."""
    return ["" if adopted and "." in name else normalize(row[i]) for i, name in enumerate(names)]


def dirty_names(names: Sequence[str], row: Sequence[Any], baseline: Sequence[str]) -> List[str]:
    return [name for i, name in enumerate(names) if normalize(row[i]) != baseline[i]]


def values_of(names: Sequence[str], row: Sequence[Any], dirty: Sequence[str]) -> Dict[str, Optional[str]]:
    return {name: (None if row[names.index(name)] is None else normalize(row[names.index(name)])) for name in dirty}
