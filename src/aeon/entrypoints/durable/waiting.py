"""A durable `aeon run` (the default) started through the DurableRuns port, and what a run waiting for a
decision shows."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:  # the kernel, the settings schema and the container load when a command runs, not for --help
    from aeon.adapters.tools.composite import CompositeTools
    from aeon.application.ports import ApproverPort, ProgressPort
    from aeon.application.results import RunResult
    from aeon.domain.approval import Pending
    from aeon.domain.history import ExecutionHistory
    from aeon.domain.plan import Plan
    from aeon.domain.progress import ProgressEvent
    from aeon.domain.run_state import RunState
    from aeon.entrypoints.config.schema import Settings
    from aeon.entrypoints.container import Container

from aeon.entrypoints.durable.options import _say, leave_waiting, stoppable


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
    from aeon.adapters.durable.runs import DbosRuns
    from aeon.entrypoints.durable import compose

    encoded = msgspec.json.encode(plan).decode() if plan is not None else None
    spec = compose.spec_for(request, config, overrides, log_path=settings.log.path, plan=encoded)
    # loaded once, composed once: the run executes here from the command's settings and container
    compose.composer().settle(spec, settings, container)
    with (
        compose.composer().lent_tools(settings, tools) if tools is not None else nullcontext(),
        compose.engine_for(settings, "run") as engine,
        stoppable(f"run {spec.run_id} is on the record; finish it with: aeon resume {spec.run_id}"),
    ):
        outcome = DbosRuns(engine).start(
            spec.run_id,
            spec.request,
            plan=spec.plan,
            config=spec.config,
            overrides=spec.overrides,
            progress=_Announcing(spec.run_id, progress),
            approver=inline,
            leave_when_waiting=show_waiting is not None,
        )
        if outcome.awaiting is not None and show_waiting is not None:
            waiting = awaiting_result(spec.run_id, spec.request, outcome.awaiting, outcome.state, settings)
            leave_waiting(lambda: show_waiting(waiting))
    assert outcome.result is not None
    return outcome.result


def awaiting_result(
    run_id: str, request: str, pending: Pending, state: RunState | None = None, settings: Settings | None = None
) -> RunResult:
    """The result a run waiting for a decision shows: the plan and budget so far, and the call it waits on; with the
    run's `state` (known to the process it waits in) its history so far, which --history writes."""
    from aeon.application.results import BudgetReport, RunResult, RunStatus
    from aeon.domain.history import step_results
    from aeon.domain.records import Counters

    plan = pending.plan
    return RunResult(
        status=RunStatus.AWAITING_APPROVAL,
        correlation_id=run_id,
        request=request,
        plan=plan,
        outputs=step_results(plan) if plan is not None else {},
        budget=BudgetReport.of(pending.budget, cost=None),
        counts=state.counters if state is not None else Counters(),
        pending_approval=pending.request,
        history=waiting_history(state, settings) if state is not None and settings is not None else None,
    )


def waiting_history(state: RunState, settings: Settings) -> ExecutionHistory:
    """The execution history of a run that waits for a decision: its passes so far (the one under way too), its
    statistics, and `result_type` awaiting_approval."""
    from aeon.domain.history import ExecutionHistory, FinalResult, OverallStatistics, RunConfiguration
    from aeon.entrypoints.config.schema import kernel_settings

    run, spent = kernel_settings(settings), state.budget
    passes = [*state.passes, *([state.current] if state.current is not None else [])]
    return ExecutionHistory(
        execution_id=state.correlation_id,
        task_input=state.request,
        configuration=RunConfiguration(
            ttl=spent.limits.ttl,
            max_llm_calls=spent.limits.max_llm_calls,
            evaluate=run.evaluate,
            convergence_criteria=run.criteria,
            adaptive_depth_settings={"ttl_cap": spent.limits.ttl},
        ),
        passes=passes,
        final_result=FinalResult(result_type="awaiting_approval"),
        overall_statistics=OverallStatistics(
            total_passes=len(passes),
            total_time_seconds=round(spent.elapsed_seconds, 6),
            llm_calls=spent.llm_calls,
            prompt_tokens=spent.prompt_tokens,
            completion_tokens=spent.completion_tokens,
            cached_tokens=spent.cached_tokens,
        ),
        profiles=list(state.profiles),
        advisories=list(state.advisories),
        approvals=list(state.approvals),
    )


def _leave_if_waiting(
    engine: Any, run_id: str, outcome: Any, *, as_json: bool, settings: Settings, history: Path | None
) -> None:
    """A run that waits (again) for a decision: shown as awaiting approval (its history so far written to
    `history`), and left waiting on the record (exit 6: the engine is not shut down, which would cancel it)."""
    from aeon.entrypoints.render import present
    from aeon.entrypoints.secrets import redactor_for

    if outcome.awaiting is None:
        return
    waiting = recorded_awaiting(engine, run_id, outcome.awaiting, outcome.state, settings)
    leave_waiting(lambda: present(waiting, as_json=as_json, history=history, redactor=redactor_for(settings)))


def recorded_awaiting(
    engine: Any, run_id: str, pending: Pending, state: RunState | None = None, settings: Settings | None = None
) -> RunResult:
    """`awaiting_result` for a run on the record, its request read from its recorded input."""
    from aeon.adapters.durable.runtime import RunSpec

    found = engine.client.list_workflows(workflow_ids=[run_id], load_output=False)
    request = msgspec.json.decode(found[0].input["args"][0], type=RunSpec).request if found else ""
    return awaiting_result(run_id, request, pending, state, settings)


class _Announcing:
    """The run's progress, which first says the run's id (also with -q: it is needed after a crash) — once the run
    has begun, so that a run refused at its start (an unwritable log) says only why, as every other door does."""

    def __init__(self, run_id: str, inner: ProgressPort | None) -> None:
        self._run_id, self._inner, self._said = run_id, inner, False

    def update(self, event: ProgressEvent) -> None:
        if not self._said:
            self._said = True
            _say(f"durable run {self._run_id} (after a crash: aeon resume {self._run_id})")
        if self._inner is not None:
            self._inner.update(event)
