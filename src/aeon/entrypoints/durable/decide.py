"""`aeon approve` and `aeon deny`: a person's decision on the call a durable run waits on."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from aeon.entrypoints.durable.options import (
    ByOpt,
    ConfigOpt,
    DebugOpt,
    HistoryOpt,
    JsonOpt,
    RunIdArg,
    SendOnlyOpt,
)
from aeon.entrypoints.durable.waiting import on_record
from aeon.entrypoints.failures import (
    EXIT_OK,
    reported,
    say,
)

if TYPE_CHECKING:
    from aeon.adapters.durable.runtime import Outcome
    from aeon.application.runs import RecordedRuns


def approve(
    run_id: RunIdArg,
    args: Annotated[
        str | None,
        typer.Option("--args", help="Run the call with these arguments instead (a JSON object, checked first)."),
    ] = None,
    by: ByOpt = None,
    send_only: SendOnlyOpt = False,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    history: HistoryOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Approve the tool call a durable run waits on, as it was asked or with edited --args, and go on with the run
    here (from any process that shares the database). No LLM call on the record is made again.

    Exit codes: those of aeon run for the run's ending (6 when it waits again, on its next call); 2 when the run
    waits on nothing or the edited arguments do not fit the tool's schema (nothing is sent then).
    """
    from aeon.application.approval_args import edited_args
    from aeon.application.runs import approval

    with reported(as_json=as_json, debug=debug):  # --args that are no JSON object: exit 2 in one line
        decision = approval(by, edited_args(args))
    _decide(run_id, decision, send_only=send_only, config=config, as_json=as_json, history=history, debug=debug)


def deny(
    run_id: RunIdArg,
    reason: Annotated[
        str, typer.Option("--reason", help="Why the call must not be made (recorded, shown to the run).")
    ],
    by: ByOpt = None,
    send_only: SendOnlyOpt = False,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    history: HistoryOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Deny the tool call a durable run waits on, with a reason, and go on with the run here: the step fails as
    denied, the evaluation sees why, and a refinement may not plan the same call again.

    Exit codes as for aeon approve.
    """
    from aeon.application.runs import denial

    with reported(as_json=as_json, debug=debug):  # as the web view: the run, its evaluation and the record show why
        decision = denial(by, reason, hint=" (--reason TEXT)")
    _decide(run_id, decision, send_only=send_only, config=config, as_json=as_json, history=history, debug=debug)


def _decide(
    run_id: str,
    decision: Any,
    *,
    send_only: bool,
    config: Path | None,
    as_json: bool,
    history: Path | None,
    debug: bool,
) -> None:
    def answered(runs: RecordedRuns[Outcome]) -> Outcome:
        outcome = runs.answer(run_id, decision, go_on=not send_only)
        if outcome is None:
            said = "approved" if decision.approved else "denied"
            say(f"{said}: run {run_id} goes on in the process that holds it, or with: aeon resume {run_id}")
            raise typer.Exit(EXIT_OK)
        return outcome

    on_record(run_id, answered, config=config, kind="resume", as_json=as_json, history=history, debug=debug)
