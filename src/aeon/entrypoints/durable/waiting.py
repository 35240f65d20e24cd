"""How a command on the record (resume, replay, approve, deny) leaves a run that waits for a decision."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the kernel, the settings schema and the container load when a command runs, not for --help
    from aeon.adapters.durable.runtime import Outcome
    from aeon.application.runs import RecordedRuns

from aeon.entrypoints.durable.options import _present, _settings, leave_waiting, stoppable
from aeon.entrypoints.failures import reported


def on_record(
    run_id: str,
    operation: Callable[[RecordedRuns[Outcome]], Outcome],
    *,
    config: Path | None,
    kind: str,
    as_json: bool,
    history: Path | None,
    debug: bool,
    stays: str | None = None,
) -> None:
    """A command on the record (resume, replay, approve, deny): its settings loaded, an engine open meanwhile, and
    Ctrl-C or SIGTERM leaving run `run_id` on the record (saying `stays`); then `operation`'s outcome shown — a run
    that waits (again) for a decision shown as awaiting approval (its history so far written to `history`) and left
    waiting on the record (exit 6: the engine is not shut down, which would cancel it)."""
    from aeon.application.runs import RecordedRuns
    from aeon.entrypoints.durable.factory import process
    from aeon.entrypoints.render import present
    from aeon.entrypoints.secrets import redactor_for

    stays = stays or f"run {run_id} is on the record; finish it with: aeon resume {run_id}"
    with reported(as_json=as_json, debug=debug):
        settings = _settings(config)
        with process().runs(settings, kind) as recorded, stoppable(stays):
            outcome = operation(RecordedRuns(recorded))
            if outcome.awaiting is not None:
                waiting = process().awaiting(recorded, run_id, outcome, settings)
                redactor = redactor_for(settings)
                leave_waiting(lambda: present(waiting, as_json=as_json, history=history, redactor=redactor))
    _present(outcome, as_json=as_json, history=history, settings=settings)
