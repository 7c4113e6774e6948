"""What the guard tells you about a dirty connection: a report (handed to
on_report / on_violation) and the error a refused checkout raises.
Mirrors src/guard/report.ts."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

#: "T": a transaction is open; "E": it is open and failed; None: none.
OpenTransaction = Optional[str]

#: One captured frame: (module, function, file, line).
Frame = Tuple[str, str, str, int]

# Frames of the guard, the drivers and the machinery between a job and its
# pool; the job that released is the first frame outside them.
_INTERNAL = frozenset(
    {"pgq_audit", "psycopg", "psycopg_pool", "psycopg2", "sqlalchemy", "asyncpg", "contextlib", "asyncio", "greenlet", "threading", "concurrent"}
)
_MAX_FRAMES = 32


def capture_site(skip: int = 1) -> List[Frame]:
    """The caller's stack as plain tuples, innermost first. Frames change once the call
    returns, so they are copied now; formatting waits until a report is read."""
    frames: List[Frame] = []
    frame: Optional[FrameType] = sys._getframe(skip)
    while frame is not None and len(frames) < _MAX_FRAMES:
        frames.append(_frame(frame))
        frame = frame.f_back
    if all(_internal(f) for f in frames):
        # Inside a greenlet (SQLAlchemy's asyncio pool events) the stack ends at the
        # greenlet: the job is in the asyncio task awaiting it.
        frames.extend(_awaiting(_MAX_FRAMES))
    return frames


def _frame(frame: FrameType) -> Frame:
    code = frame.f_code
    return (str(frame.f_globals.get("__name__", "")), code.co_name, code.co_filename, frame.f_lineno)


def _awaiting(limit: int) -> List[Frame]:
    """The current asyncio task's chain of awaits, innermost first."""
    if "asyncio" not in sys.modules:
        return []
    import asyncio

    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop
        return []
    chain: List[Frame] = []
    awaited: Any = task.get_coro() if task is not None else None
    while awaited is not None and len(chain) < limit:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if frame is None:
            break
        chain.append(_frame(frame))
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    chain.reverse()
    return chain


def _internal(frame: Frame) -> bool:
    return frame[0].split(".", 1)[0] in _INTERNAL


def _format(frame: Frame) -> str:
    return f"{frame[1]} ({frame[2]}:{frame[3]})"


class LeakReport:
    """A dirty connection found at checkout (or a connection the pool's reset callback
    left in a transaction). Values only with include_values=True."""

    def __init__(
        self,
        *,
        settings: Sequence[str],
        transaction: OpenTransaction,
        settings_read: bool,
        values: Optional[Mapping[str, Optional[str]]] = None,
        release: Optional[List[Frame]] = None,
        released_via: Optional[str] = None,
        job_name: Optional[str] = None,
        backend_pid: Optional[int] = None,
        reset_function: Optional[str] = None,
    ) -> None:
        #: Settings whose value differs from the one the connection was opened with.
        self.settings: Tuple[str, ...] = tuple(settings)
        #: "T" open, "E" open and failed (the settings could not be read then), None none.
        self.transaction_status: OpenTransaction = transaction
        self.in_transaction: bool = transaction is not None
        #: False when a failed transaction kept the guard from reading the settings.
        self.settings_read: bool = settings_read
        #: Current values of the dirty settings; only with include_values=True.
        self.values: Optional[Dict[str, Optional[str]]] = dict(values) if values is not None else None
        #: How the connection was last returned: "putconn", "checkin" (SQLAlchemy), "release" (asyncpg).
        self.released_via: Optional[str] = released_via
        #: What the job_name option returned at that release.
        self.job_name: Optional[str] = job_name
        #: The PostgreSQL backend pid, to match server logs (pg_stat_activity.pid).
        self.backend_pid: Optional[int] = backend_pid
        #: Set when the pool's reset callback, not a job, left the transaction open.
        self.reset_function: Optional[str] = reset_function
        self._release = release

    @property
    def release_stack(self) -> Optional[List[str]]:
        """The stack of the call that returned the connection dirty, innermost first,
        without the guard's own frames."""
        if self._release is None:
            return None
        frames = [f for f in self._release if f[0].split(".", 1)[0] != "pgq_audit"]
        return [_format(f) for f in frames]

    @property
    def released_at(self) -> Optional[str]:
        """The first frame of the release stack outside the guard, the driver and the
        pool: the code that returned the connection, e.g. ``run_job (/srv/worker/jobs.py:41)``."""
        if not self._release:
            return None
        for frame in self._release:
            if not _internal(frame):
                return _format(frame)
        # Only the driver's frames: SQLAlchemy's asyncio engine returns connections in a
        # task of its own. job_name names the job there.
        return None

    def describe(self) -> str:
        """One sentence per finding: what happened. No values unless include_values."""
        parts: List[str] = []
        custom = [s for s in self.settings if "." in s]
        builtin = [s for s in self.settings if "." not in s]
        if self.transaction_status == "E":
            parts.append("a failed transaction was still open (the job returned the connection without ROLLBACK)")
        elif self.transaction_status == "T":
            parts.append("a transaction was still open (the job returned the connection without COMMIT or ROLLBACK)")
        if custom:
            shown = ", ".join(self._named(s) for s in custom)
            verb = "were" if len(custom) > 1 else "was"
            parts.append(
                f"{shown} {verb} set inside that transaction"
                if self.in_transaction
                else f"{shown} {verb} still set for the session (set_config(..., false) or SET outside a transaction)"
            )
        if builtin:
            shown = ", ".join(self._named(s) for s in builtin)
            parts.append(f"{shown} {'differ' if len(builtin) > 1 else 'differs'} from the value at connect")
        return "; ".join(parts)

    def _named(self, name: str) -> str:
        if self.values is None:
            return name
        value = self.values.get(name)
        return f"{name} = {'NULL' if value is None else json.dumps(value)}"

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-ready form for structured logs (no values unless include_values)."""
        out: Dict[str, Any] = {
            "settings": list(self.settings),
            "in_transaction": self.in_transaction,
            "transaction_status": self.transaction_status,
            "settings_read": self.settings_read,
        }
        if self.values is not None:
            out["values"] = self.values
        out.update(
            released_via=self.released_via,
            job_name=self.job_name,
            released_at=self.released_at,
            release_stack=self.release_stack,
            backend_pid=self.backend_pid,
        )
        if self.reset_function is not None:
            out["reset_function"] = self.reset_function
        return out

    def message(self) -> str:
        """The sentence a TenantLeakError carries (or the reset callback's warning)."""
        pid = f" (backend pid {self.backend_pid})" if self.backend_pid else ""
        if self.reset_function is not None:
            status = "INERROR" if self.transaction_status == "E" else "INTRANS"
            return (
                f"pgq-audit guard: the pool's reset function {self.reset_function} left the connection{pid} "
                f"in status {status}; psycopg_pool discards such a connection, so every job opens a new one. "
                "Run the reset's statements in autocommit (conn.autocommit = True) or commit before it returns."
            )
        who = f"job {json.dumps(self.job_name)}" if self.job_name else "the previous job"
        if self.released_at:
            where = f" at {self.released_at}"
        elif self._release:
            where = " (the release ran in the driver's own task, outside the job's stack; job_name names the job)"
        else:
            where = " (release site not recorded)"
        return (
            f"pgq-audit guard: refused a pooled connection{pid}: {self.describe()}. "
            f"It was released dirty by {who}{where}. "
            f"The next job would have run with that state; {_fix_for(self)}."
        )

    def __repr__(self) -> str:
        return f"LeakReport({self.to_dict()!r})"


def _fix_for(report: LeakReport) -> str:
    if report.in_transaction:
        return "end every transaction (COMMIT or ROLLBACK) before returning the connection"
    if any("." not in s for s in report.settings):
        return "use SET LOCAL / set_config(name, value, true) inside a transaction, or restore the value before returning the connection"
    return "use set_config(name, value, true) inside a transaction so the setting ends with the job"


class TenantLeakError(Exception):
    """Raised by a refused checkout. The dirty connection has been closed; it never
    goes back to the pool."""

    code = "PGQ_TENANT_LEAK"

    def __init__(self, report: LeakReport) -> None:
        super().__init__(report.message())
        self.report = report

    @property
    def settings(self) -> Tuple[str, ...]:
        return self.report.settings

    @property
    def in_transaction(self) -> bool:
        return self.report.in_transaction

    @property
    def released_at(self) -> Optional[str]:
        return self.report.released_at


@dataclass
class GuardStats:
    """Counters of a guarded pool (guard_stats(pool))."""

    #: Checkouts that went through the guard.
    checkouts: int = 0
    #: Check queries run (including reading a new connection's values at connect).
    checks: int = 0
    #: Dirty connections found at checkout.
    violations: int = 0
    #: Check queries that failed (the connection was closed, the checkout raised the driver's error).
    check_errors: int = 0
    #: Connections the pool's reset callback left in a transaction (psycopg_pool discards them).
    reset_violations: int = 0
