"""Options of the checkout guard and their validation.

Validation runs at guard_pool() time so a misconfigured guard fails at
start-up, not on the first dirty connection in staging. Names and messages
follow the TypeScript guard (src/guard/options.ts), in snake_case.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, List, Optional, Sequence, Union

from ._report import LeakReport

#: What to do with a dirty connection.
ACTIONS = ("raise", "discard", "keep")
#: Decides per violation; may return an awaitable with an async pool.
ViolationHandler = Callable[[LeakReport], Union[Optional[str], Awaitable[Optional[str]]]]
ReportHandler = Callable[[LeakReport, str], None]

# A GUC name: identifiers joined by dots. The names go into the check's SQL
# text, so nothing else may pass.
SETTING_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)*$")


@dataclass(frozen=True)
class Options:
    settings: List[str]
    on_violation: Union[str, ViolationHandler]
    on_report: Optional[ReportHandler]
    include_values: bool
    sample_rate: float
    job_name: Optional[Callable[[], Optional[str]]]


def _shown(value: Any) -> str:
    if callable(value):
        return "a function"
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _fail(option: str, expected: str, got: Any) -> "TypeError":
    return TypeError(f'pgq-audit guard: option "{option}" must be {expected} (got {_shown(got)})')


def resolve_options(
    settings: Any,
    on_violation: Any,
    on_report: Any,
    include_values: Any,
    sample_rate: Any,
    job_name: Any,
) -> Options:
    if isinstance(settings, (str, bytes)) or not isinstance(settings, Sequence) or len(settings) == 0:
        raise _fail("settings", "a non-empty list of setting names such as ['app.tenant', 'search_path']", settings)
    for name in settings:
        if not isinstance(name, str) or not SETTING_NAME.match(name):
            raise _fail(
                "settings",
                "a list of PostgreSQL setting names (identifiers joined by dots, e.g. 'app.tenant', 'search_path', 'role')",
                name,
            )
    if on_violation not in ("raise", "discard") and not callable(on_violation):
        raise _fail("on_violation", "'raise', 'discard' or a function (report) -> 'raise' | 'discard' | 'keep'", on_violation)
    if on_report is not None and not callable(on_report):
        raise _fail("on_report", "a function (report, action) -> None", on_report)
    if on_violation == "discard" and on_report is None:
        raise TypeError(
            'pgq-audit guard: option "on_report" is required with on_violation="discard" '
            "(a discarded connection must be reported somewhere; valid values: a function (report, action) -> None)"
        )
    if not isinstance(include_values, bool):
        raise _fail("include_values", "True or False", include_values)
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, (int, float)) or not 0 <= sample_rate <= 1:
        raise _fail("sample_rate", "a number from 0 to 1", sample_rate)
    if job_name is not None and not callable(job_name):
        raise _fail("job_name", "a function () -> str | None", job_name)
    return Options(
        settings=list(dict.fromkeys(settings)),
        on_violation=on_violation,
        on_report=on_report,
        include_values=include_values,
        sample_rate=float(sample_rate),
        job_name=job_name,
    )
