"""One run as `aeon ui`'s page shows it: its summary, result or the call it waits on, its records as a timeline, the
scores chart and the plan's changes from pass to pass, and where its log is (or why it cannot be shown)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from aeon.application.results import RunResult
from aeon.application.views import labels, passes
from aeon.application.views.catalog import RunSummary
from aeon.application.views.timeline import Timeline, build
from aeon.domain.approval import Pending
from aeon.domain.audit_log import ReadRecord


@dataclass
class RunView:
    summary: RunSummary
    request: str
    result: RunResult | None
    pending: Pending | None
    records: list[ReadRecord]
    timeline: Timeline
    chart: passes.Chart | None
    changes: list[passes.PassChange]
    warnings: list[str] = field(default_factory=list)
    log: Path | None = None
    log_note: str | None = None
    finished: bool = False


def run_view(
    summary: RunSummary,
    *,
    result: RunResult | None,
    history: dict[str, Any] | None,
    pending: Pending | None,
    records: list[ReadRecord],
    log: Path | None,
    log_note: str | None,
    finished: bool,
) -> RunView:
    """The run's page from what the door read of it: its summary, its result (a finished run) or the history of the
    passes it closed so far, the call it waits on, its log's records (redacted), where the log is or why not."""
    timeline = build(records)
    view = RunView(
        summary=summary,
        request=summary.row.request,
        result=result,
        pending=pending,
        records=records,
        timeline=timeline,
        chart=passes.chart(history, timeline) if history else None,
        changes=passes.changes(history, timeline) if history else [],
        log=log,
        log_note=log_note if log_note else (None if records else f"no records of this run in {log}"),
        finished=finished,
    )
    if result is not None:
        view.warnings = [*result.warnings, *(labels.advisory(msgspec.to_builtins(a)) for a in result.advisories)]
    return view


def history_so_far(run_id: str, request: str, criteria: dict[str, Any], passes: Any) -> dict[str, Any]:
    """A history document (as `aeon run --history` writes) of the passes an unfinished run has closed."""
    return {
        "execution_id": run_id,
        "task_input": request,
        "configuration": {"convergence_criteria": criteria},
        "passes": msgspec.to_builtins(passes),
    }


def log_of(given: object, configured: Path | None) -> tuple[Path | None, str | None]:
    """Where the run's JSONL records are (`given`: the log.path the run was started with; `configured`: its
    settings' log path), or why they cannot be shown."""
    if isinstance(given, str) and given:
        return Path(given), None
    if configured is None:
        return None, "this run kept no JSONL log (log.path was off)"
    if not configured.is_absolute():
        return None, f"this run's log is {configured}, relative to the folder it ran in"
    return configured, None
