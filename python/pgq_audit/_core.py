"""What every driver's guard shares: the options, the counters, each
connection's state, and the verdict on one check. The drivers (_drivers/)
only say how to read a connection and how to refuse one."""

from __future__ import annotations

import inspect
import logging
import random
import threading
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple

from ._check import baseline_from, check_sql, dirty_names, values_of
from ._options import ACTIONS, Options
from ._report import Frame, GuardStats, LeakReport, OpenTransaction, capture_site

logger = logging.getLogger("pgq_audit.guard")

#: The attribute a guarded pool carries its Guard in (guard_stats() reads it).
GUARD_ATTRIBUTE = "_pgq_audit_guard"


@dataclass
class ConnectionState:
    """What the guard knows about one connection."""

    #: Normalised values at connect, one per setting.
    baseline: List[str]
    #: Whether the next checkout runs the check (the sample is drawn at release).
    check_next: bool = False
    #: The stack of the release the next check looks at.
    release: Optional[List[Frame]] = None
    released_via: Optional[str] = None
    job_name: Optional[str] = None


class Guard:
    """One guarded pool's options, counters and verdicts; shared by its threads (the
    counters take a lock) or its event loop."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.names: List[str] = options.settings
        self.sql = check_sql(self.names)
        self.stats = GuardStats()
        self._lock = threading.Lock()
        rate = options.sample_rate
        self._sample: Callable[[], bool] = (
            (lambda: True) if rate >= 1 else (lambda: False) if rate <= 0 else (lambda: random.random() < rate)
        )

    def count(self, field: str, by: int = 1) -> None:
        with self._lock:
            setattr(self.stats, field, getattr(self.stats, field) + by)

    # ---- connect and release ---------------------------------------------------------

    def connected(self, row: Sequence[Any]) -> ConnectionState:
        """A new connection, read once its pool's configure callback has run: known clean,
        so its first checkout needs no check."""
        return ConnectionState(baseline=baseline_from(self.names, row, adopted=False))

    def released(self, state: ConnectionState, via: str) -> None:
        """At each release: draw the next checkout's sample, and capture the stack only
        when a check will look at it."""
        state.check_next = self._sample()
        if state.check_next:
            state.release = capture_site(skip=2)
            state.released_via = via
            state.job_name = self._job_name()
        else:
            state.release = None

    def _job_name(self) -> Optional[str]:
        if self.options.job_name is None:
            return None
        try:
            name = self.options.job_name()
        except Exception:  # naming must never break a release
            return None
        return name if isinstance(name, str) else None

    # ---- the verdict -----------------------------------------------------------------

    def judge(
        self,
        state: Optional[ConnectionState],
        status: OpenTransaction,
        row: Optional[Sequence[Any]],
        pid: Optional[int],
    ) -> Tuple[ConnectionState, Optional[LeakReport]]:
        """The state after a check, and a report when the connection is dirty. `state` is
        None at the first checkout of a connection the guard did not see open (adopted);
        `row` is None when a failed transaction kept the check from reading."""
        adopted = state is None
        if state is None:
            state = ConnectionState(baseline=baseline_from(self.names, row or [""] * len(self.names), adopted=True))
        dirty = dirty_names(self.names, row, state.baseline) if row is not None else []
        if status is None and not dirty:
            state.release = None
            return state, None
        self.count("violations")
        report = LeakReport(
            settings=dirty,
            transaction=status,
            settings_read=row is not None,
            values=values_of(self.names, row, dirty) if self.options.include_values and row is not None else None,
            release=None if adopted else state.release,
            released_via=None if adopted else state.released_via,
            job_name=None if adopted else state.job_name,
            backend_pid=pid,
        )
        return state, report

    def action(self, report: LeakReport) -> str:
        """What to do with a dirty connection, from on_violation; on_report hears of it.
        Raises when the handler fails or answers nonsense (the caller closes the connection)."""
        handler = self.options.on_violation
        if isinstance(handler, str):
            return self._reported(report, handler)
        result = handler(report)
        if inspect.isawaitable(result):
            raise TypeError("pgq-audit guard: on_violation returned an awaitable; use a plain function with a sync pool")
        return self._reported(report, _accept(result))

    async def action_async(self, report: LeakReport) -> str:
        handler = self.options.on_violation
        if isinstance(handler, str):
            return self._reported(report, handler)
        result: Any = handler(report)
        if inspect.isawaitable(result):
            result = await result
        return self._reported(report, _accept(result))

    def _reported(self, report: LeakReport, action: str) -> str:
        if self.options.on_report is not None:
            self.options.on_report(report, action)
        return action

    def reset_left_transaction(self, report: LeakReport) -> None:
        """The pool's reset callback left a transaction open: the pool discards the
        connection. Reported through on_report, or logged when there is none."""
        self.count("reset_violations")
        if self.options.on_report is not None:
            try:
                self.options.on_report(report, "discard")
            except Exception:  # the pool's return path must go on
                logger.exception("pgq-audit guard: on_report failed")
        else:
            logger.warning(report.message())


def _accept(value: Any) -> str:
    if value is None:
        return "discard"
    if value in ACTIONS:
        return str(value)
    raise TypeError(
        f"pgq-audit guard: on_violation returned {value!r}; valid values: 'raise', 'discard', 'keep' or None (= 'discard')"
    )
