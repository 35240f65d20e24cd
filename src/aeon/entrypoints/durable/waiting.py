"""A durable `aeon run` (the default) started through the DurableRuns port, and how a command leaves a run that
waits for a decision."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the kernel, the settings schema and the container load when a command runs, not for --help
    from aeon.adapters.durable.runs import DbosRuns
    from aeon.adapters.durable.runtime import Outcome
    from aeon.adapters.tools.composite import CompositeTools
    from aeon.application.ports import ApproverPort, ProgressPort
    from aeon.application.results import RunResult
    from aeon.domain.plan import Plan
    from aeon.entrypoints.config.schema import Settings
    from aeon.entrypoints.container import Container

from aeon.entrypoints.durable.options import _present, _say, _settings, leave_waiting, stoppable
from aeon.entrypoints.failures import reported


def run_durable(
    settings: Settings,
    config: Path | None,
    overrides: dict[str, Any],
    request: str,
    plan: Plan | None,
    *,
    progress: ProgressPort | None,
    inline: ApproverPort | None = None,
    show_waiting: Callable[[RunResult], None] | None = None,
    tools: CompositeTools | None = None,
    container: Container | None = None,
) -> RunResult:
    """A durable `aeon run` (the default): the run as a DBOS workflow in this process. A crash (or Ctrl-C, SIGTERM,
    SIGKILL) leaves it on the record, where `aeon resume RUN_ID` finishes it. A tool call that needs approval is asked
    about on this terminal (`inline`); with nobody to ask, `show_waiting` shows the run awaiting approval and the
    process leaves it waiting on the record (exit 6) for `aeon approve` / `aeon deny` from any process. `tools`:
    those the command already started (its MCP servers), lent to the run so that they start once; `container`: the
    command's, which builds the run too (one per process)."""
    from aeon.adapters.durable.awaiting import Announcing
    from aeon.adapters.durable.process import spec_for
    from aeon.entrypoints.durable.factory import process

    durable = process()
    spec = spec_for(request, config, overrides, log_path=settings.log.path, plan=plan)
    stays = f"run {spec.run_id} is on the record; finish it with: aeon resume {spec.run_id}"
    with durable.direct(spec, settings, container=container, tools=tools) as runs, stoppable(stays):
        outcome = runs.start(
            spec.run_id, spec.request, plan=spec.plan, config=spec.config, overrides=spec.overrides,
            progress=Announcing(spec.run_id, progress, say=_say), approver=inline,
            leave_when_waiting=show_waiting is not None,
        )  # fmt: skip
        if outcome.awaiting is not None and show_waiting is not None:
            waiting = durable.awaiting(runs, spec.run_id, outcome, settings, spec.request)
            leave_waiting(lambda: show_waiting(waiting))
    assert outcome.result is not None
    return outcome.result


def on_record(
    run_id: str,
    operation: Callable[[DbosRuns], Outcome],
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
    from aeon.entrypoints.durable.factory import process
    from aeon.entrypoints.render import present
    from aeon.entrypoints.secrets import redactor_for

    stays = stays or f"run {run_id} is on the record; finish it with: aeon resume {run_id}"
    with reported(as_json=as_json, debug=debug):
        settings = _settings(config)
        with process().runs(settings, kind) as recorded, stoppable(stays):
            outcome = operation(recorded)
            if outcome.awaiting is not None:
                waiting = process().awaiting(recorded, run_id, outcome, settings)
                redactor = redactor_for(settings)
                leave_waiting(lambda: present(waiting, as_json=as_json, history=history, redactor=redactor))
    _present(outcome, as_json=as_json, history=history, settings=settings)
