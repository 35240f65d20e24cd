"""How each ending of a run is assembled from the run's state: the expiry response, the structured error, the
execution history and the RunResult (whose types are in application/results.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from aeon.application.errors import BudgetExhausted
from aeon.application.kernel.run import Run, RunSettings
from aeon.application.results import BudgetReport, ErrorInfo, MissingToolCall, RunResult, RunStatus
from aeon.domain.advisories import ManualIntervention
from aeon.domain.answers import answer_label, final_answer
from aeon.domain.budget import Cap
from aeon.domain.errors import AeonError
from aeon.domain.expiry import ExpiryMetrics, TTLExpirationResponse
from aeon.domain.history import (
    ExecutionHistory,
    ExecutionPass,
    FinalResult,
    OverallStatistics,
    PassSummary,
    RunConfiguration,
    step_results,
)
from aeon.domain.ledger import LedgerReport
from aeon.domain.phases import PhaseTransitionError
from aeon.domain.plan import ExecutionMode, Plan, StepStatus

STEP_FAILED = "AEON.STEP.FAILED"


def expiration(
    exc: BudgetExhausted, run: Run, *, completed: Sequence[ExecutionPass], cut: ExecutionPass | None
) -> TTLExpirationResponse:
    """The one expiry answer: latest completed pass, or the cut pass when none completed."""
    s = run.state
    last = s.assessments[-1] if s.assessments else None
    metrics = ExpiryMetrics(pass_number=s.pass_number)
    if last is not None:
        metrics = ExpiryMetrics(
            completeness_score=last.scores.get("completeness_score"),
            coherence_score=last.scores.get("coherence_score"),
            consistency_status=last.scores.get("consistency_status"),
            detected_issues=last.detected_issues,
            reason_codes=last.reason_codes,
            pass_number=s.pass_number,
        )
    return TTLExpirationResponse(
        expiration_type=exc.expiration_type,
        cap=exc.cap,
        phase=exc.phase or run.phase.value,
        pass_number=s.pass_number,
        plan_state=s.plan,
        execution_results=step_results(s.plan),
        message=f"stopped, not converged: {exc}{_pace(run) if exc.cap is Cap.MAX_SECONDS else ''}",
        latest_pass_result=PassSummary.of(completed[-1]) if completed else None,
        partial_result=PassSummary.of(cut) if cut is not None and not completed else None,
        ttl_expired_metadata=metrics,
    )


def _pace(run: Run) -> str:
    """Where the time of a run stopped by run.max_seconds went, and what to change."""
    s = run.state
    elapsed, llm = s.budget.elapsed_seconds, s.usage.total().seconds
    if s.usage.calls and llm >= elapsed / 2:
        return f"; the LLM answers were slow: {s.usage.pace()} of the {elapsed:.1f} s: raise run.max_seconds"
    return f"; {s.usage.pace()} of the {elapsed:.1f} s, the rest in tools and steps: raise run.max_seconds"


def error_info(exc: AeonError, run: Run) -> ErrorInfo:
    pte = exc if isinstance(exc, PhaseTransitionError) else None
    return ErrorInfo(
        code=exc.code,
        message=str(exc),
        phase=run.phase.value,
        step_id=run.current_step,
        correlation_id=run.state.correlation_id,
        severity=pte.severity.level if pte else "ERROR",
        affected_component=pte.affected_component if pte else None,
        failure_condition=pte.failure_condition if pte else None,
        pass_number=run.state.pass_number,
    )


def history_of(
    run: Run,
    settings: RunSettings,
    *,
    converged: bool,
    status: RunStatus,
    extra: dict[str, Any],
    ledger: LedgerReport | None = None,
) -> ExecutionHistory:
    s, b = run.state, run.state.budget
    answer = final_answer(s.plan) if s.plan else None
    manual = [a for a in s.advisories if isinstance(a, ManualIntervention)]
    return ExecutionHistory(
        execution_id=s.correlation_id,
        task_input=s.request,
        configuration=RunConfiguration(
            ttl=settings.ttl,
            max_llm_calls=settings.max_llm_calls,
            evaluate=settings.evaluate,
            convergence_criteria=settings.criteria,
            adaptive_depth_settings={"ttl_cap": settings.ttl},
        ),
        passes=list(s.passes),
        final_result=FinalResult(
            converged=converged,
            result_type="converged" if converged else status.value,
            output=answer,
            metadata={**extra, "manual_intervention": manual},
        ),
        overall_statistics=OverallStatistics(
            total_passes=len(s.passes),
            convergence_achieved=converged,
            total_refinements=sum(1 for p in s.passes for c in p.refinement_changes if c.applied),
            total_time_seconds=round(b.elapsed_seconds, 6),
            llm_calls=b.llm_calls,
            prompt_tokens=b.prompt_tokens,
            completion_tokens=b.completion_tokens,
            cached_tokens=b.cached_tokens,
            cost=ledger.total.cost if ledger is not None else None,
        ),
        profiles=list(s.profiles),
        advisories=list(s.advisories),
        ledger=ledger,
        approvals=list(s.approvals),
    )


def tool_calls_not_made(plan: Plan | None) -> list[MissingToolCall]:
    """The tool steps that fell back to LLM text: their tools never ran."""
    return [
        MissingToolCall(step_id=st.step_id, tool=st.tool, args=st.args, reason="; ".join(st.errors))
        for st in (plan.steps if plan is not None else [])
        if st.tool is not None and st.tool_never_ran  # (the first test narrows the type for mypy)
    ]


def failure(plan: Plan | None) -> tuple[str, str] | None:
    """The step to blame and why, when a run that went to its end did not do what it was asked: no step succeeded,
    or the last step (the answer's) or the last tool step did not complete (failed, or held back by one that
    failed); an earlier step's output would otherwise pass for the answer. None when it did."""
    steps = plan.steps if plan is not None else []
    if not steps:
        return None
    tools = [st for st in steps if st.tool is not None]
    if all(st.status is not StepStatus.COMPLETE for st in steps):
        culprit, why = steps[-1], "no step succeeded"
    elif tools and tools[-1].status is not StepStatus.COMPLETE:
        culprit, why = tools[-1], "the last tool step did not complete"
    elif steps[-1].status is not StepStatus.COMPLETE:
        culprit, why = steps[-1], "the last step did not complete"
    else:
        return None
    failed = [st for st in steps if st.status is StepStatus.FAILED]
    first = culprit if culprit.status is StepStatus.FAILED or not failed else failed[0]  # else what it waited on
    said = "; ".join(first.errors) or first.status.value
    name = f"step {first.step_id}" + (f" ({first.tool})" if first.tool else "")
    return first.step_id, f"{why}; {name} {first.status.value} — {said}"


DENIED_CODE = "AEON.APPROVAL.DENIED"


def _denied(run: Run, status: RunStatus, converged: bool | None) -> ErrorInfo | None:
    """Why a run that did not get done (out of passes, or not converged) ended so: a person denied a tool call its
    final plan still needed — the step, the tool, who denied it and why. None when no such step stands."""
    s = run.state
    done = (RunStatus.TTL_EXPIRED, RunStatus.COMPLETED, RunStatus.UNVERIFIED, RunStatus.FAILED)  # a denial wins
    if status not in done or converged or not s.plan:
        return None
    denied = [step for step in s.plan.steps if step.mode is ExecutionMode.DENIED]
    if not denied:
        return None
    step = denied[-1]
    said = next(
        (f"denied by {a.decision.by}: {a.decision.reason or 'no reason given'}" for a in reversed(s.approvals)
         if a.request.step_id == step.step_id and not a.decision.approved),
        "; ".join(step.errors) or "denied",
    )  # fmt: skip
    message = f"a person denied step {step.step_id} ({step.tool}), {said}; the run did not get done without it"
    return _step_error(run, DENIED_CODE, message, step.step_id)


def _step_error(run: Run, code: str, message: str, step_id: str) -> ErrorInfo:
    """The error of a run that ended because of one step (it failed, or a person denied it), where the run stood."""
    return ErrorInfo(
        code=code,
        message=message,
        phase=run.phase.value,
        step_id=step_id,
        correlation_id=run.state.correlation_id,
        pass_number=run.state.pass_number,
    )


def assemble(
    run: Run,
    settings: RunSettings,
    status: RunStatus,
    *,
    error: ErrorInfo | None,
    expired: TTLExpirationResponse | None,
) -> RunResult:
    """Close the history (final result, statistics) and build the RunResult."""
    s, b = run.state, run.state.budget
    run.meter.tick(run.clock.monotonic())
    not_made = tool_calls_not_made(s.plan)
    if status is RunStatus.COMPLETED and (failed := failure(s.plan)) is not None:  # `aeon run … && next` stops
        status, error = RunStatus.FAILED, _step_error(run, STEP_FAILED, failed[1], failed[0])
    if status is RunStatus.COMPLETED and not_made:  # a script's `aeon run … && next` must not go on as if it ran
        status = RunStatus.UNVERIFIED
    last = s.assessments[-1] if s.assessments else None
    converged = (last.converged if last else False) if settings.evaluate else None
    if (denial := _denied(run, status, converged)) is not None:
        status, error, expired = RunStatus.DENIED, denial, None  # not a timeout: the person's decision ended it
    ledger = s.usage.report()
    extra = {"error": error, "ttl_expiration": expired}
    history = history_of(run, settings, converged=bool(converged), status=status, extra=extra, ledger=ledger)
    return RunResult(
        status=status,
        correlation_id=s.correlation_id,
        request=s.request,
        plan=s.plan,
        outputs=step_results(s.plan),
        budget=BudgetReport.of(b, cost=ledger.total.cost),
        counts=s.counters,
        warnings=list(s.warnings),
        ttl_expiration=expired,
        error=error,
        converged=converged,
        passes=len(s.passes),
        answer=history.final_result.output,
        convergence=last,
        history=history,
        advisories=list(s.advisories),
        tool_calls_not_made=not_made,
        ledger=ledger,
        untrusted_sources=_untrusted_sources(s.plan),
    )


def _untrusted_sources(plan: Plan | None) -> list[str] | msgspec.UnsetType:
    label = answer_label(plan) if plan is not None else None
    return msgspec.UNSET if label is None or label.trusted else list(label.sources)
