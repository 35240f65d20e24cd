"""What a durable run reports: its id once it has begun (Announcing), and, waiting for a person's decision, the plan
and budget so far, the call it waits on, and (known to the process it waits in) its history so far."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from aeon.adapters.durable.runtime import RunSpec
from aeon.application.ports import ProgressPort
from aeon.application.results import BudgetReport, RunResult, RunStatus
from aeon.domain.approval import Pending
from aeon.domain.evaluation import ConvergenceCriteria
from aeon.domain.history import ExecutionHistory, FinalResult, OverallStatistics, RunConfiguration, step_results
from aeon.domain.progress import ProgressEvent
from aeon.domain.records import Counters
from aeon.domain.run_state import RunState

Judging = tuple[bool, ConvergenceCriteria]  # whether runs are evaluated, and the convergence criteria


def awaiting_result(
    run_id: str, request: str, pending: Pending, state: RunState | None = None, judging: Judging | None = None
) -> RunResult:
    """The result a run waiting for a decision shows: the plan and budget so far, and the call it waits on; with the
    run's `state` (known to the process it waits in) its history so far, which --history writes."""
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
        history=waiting_history(state, judging) if state is not None and judging is not None else None,
    )


def recorded_request(client: Any, run_id: str) -> str:
    """The request of run `run_id`, read from its recorded input ("" for a run not on the record)."""
    found = client.list_workflows(workflow_ids=[run_id], load_output=False)
    return msgspec.json.decode(found[0].input["args"][0], type=RunSpec).request if found else ""


def waiting_history(state: RunState, judging: Judging) -> ExecutionHistory:
    """The execution history of a run that waits for a decision: its passes so far (the one under way too), its
    statistics, and `result_type` awaiting_approval."""
    evaluate, criteria = judging
    spent = state.budget
    passes = [*state.passes, *([state.current] if state.current is not None else [])]
    return ExecutionHistory(
        execution_id=state.correlation_id,
        task_input=state.request,
        configuration=RunConfiguration(
            ttl=spent.limits.ttl,
            max_llm_calls=spent.limits.max_llm_calls,
            evaluate=evaluate,
            convergence_criteria=criteria,
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


class Announcing:
    """A direct run's progress, which first says the run's id (also with -q: it is needed after a crash) — once the
    run has begun, so that a run refused at its start (an unwritable log) says only why, as every other door does."""

    def __init__(self, run_id: str, inner: ProgressPort | None, *, say: Callable[[str], None]) -> None:
        self._run_id, self._inner, self._say, self._said = run_id, inner, say, False

    def update(self, event: ProgressEvent) -> None:
        if not self._said:
            self._said = True
            self._say(f"durable run {self._run_id} (after a crash: aeon resume {self._run_id})")
        if self._inner is not None:
            self._inner.update(event)
