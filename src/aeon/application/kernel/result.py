"""What a run returns, for every ending — completed, expired, failed or interrupted, never a traceback — and how
each ending is assembled from the run's state: the expiry response, the structured error, the execution history."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import msgspec

from aeon.application.errors import BudgetExhausted
from aeon.application.kernel.run import Run, RunSettings
from aeon.domain.advisories import Advisory, ManualIntervention
from aeon.domain.answers import final_answer
from aeon.domain.approval import ApprovalRequest
from aeon.domain.budget import BudgetState, Cap
from aeon.domain.errors import AeonError
from aeon.domain.evaluation import ConvergenceAssessment
from aeon.domain.expiry import ExpiryMetrics, TTLExpirationResponse
from aeon.domain.history import (
    ExecutionHistory,
    ExecutionPass,
    FinalResult,
    OverallStatistics,
    PassSummary,
    RunConfiguration,
    StepResult,
    step_results,
)
from aeon.domain.ledger import LedgerReport
from aeon.domain.phases import PhaseTransitionError
from aeon.domain.plan import ExecutionMode, Plan, StepStatus
from aeon.domain.records import Counters, LostRecords

LOG_LOST = "AEON.EVENTLOG.LOST"
STEP_FAILED = "AEON.STEP.FAILED"


class RunStatus(enum.StrEnum):
    """How a run ended (a str: `result.status == "completed"` holds); `aeon run` exits with one code per status."""

    COMPLETED = "completed"
    TTL_EXPIRED = "ttl_expired"
    ERROR = "error"
    INTERRUPTED = "interrupted"  # SIGINT/SIGTERM: the steps done so far, a run_end record, no more work
    UNVERIFIED = "unverified"  # ran to its end, but a tool step's output is LLM fallback text: the tool never ran
    AWAITING_APPROVAL = "awaiting_approval"  # a durable run waits for a person (aeon approve / aeon deny)
    APPROVAL_EXPIRED = "approval_expired"  # no decision came within run.approval_timeout: the call never made
    FAILED = "failed"  # ran to its end, but no step succeeded, or the last step or the last tool step did not
    DENIED = "denied"  # did not get done because a person denied a tool call it needed (`error` says which, why)


class ErrorInfo(msgspec.Struct, kw_only=True):
    code: str
    message: str
    phase: str
    step_id: str | None = None
    correlation_id: str = ""
    severity: str | None = None
    affected_component: str | None = None
    failure_condition: str | None = None
    pass_number: int | None = None


class BudgetReport(msgspec.Struct, kw_only=True):
    ttl: int
    ttl_remaining: int
    max_llm_calls: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    max_tokens: int | None = None
    max_cost: float | None = None
    cost: float | None = None  # USD from the price table; None when a call's model has no price

    @classmethod
    def of(cls, b: BudgetState, *, cost: float | None) -> BudgetReport:
        return cls(
            ttl=b.limits.ttl,
            ttl_remaining=b.ttl_remaining,
            max_llm_calls=b.limits.max_llm_calls,
            llm_calls=b.llm_calls,
            prompt_tokens=b.prompt_tokens,
            completion_tokens=b.completion_tokens,
            cached_tokens=b.cached_tokens,
            max_tokens=b.limits.max_tokens,
            max_cost=b.limits.max_cost,
            cost=cost,
        )


class MissingToolCall(msgspec.Struct, kw_only=True):
    """A tool step that fell back to LLM text: the tool never ran, so the step's output is unverified."""

    step_id: str
    tool: str
    args: dict[str, Any]
    reason: str


class RunResult(msgspec.Struct, kw_only=True):
    """What a run returns, however it ended — what `aeon run --json` prints (and `history`, which --json leaves out
    and --history writes), secrets redacted. `outputs` holds each step's result by step id; `answer` is the final
    step's output; `budget` the TTL, calls, tokens and cost spent; `ledger` every LLM call; `error` and
    `ttl_expiration` say why a run that did not complete stopped."""

    status: RunStatus
    correlation_id: str
    request: str
    plan: Plan | None
    outputs: dict[str, StepResult]
    budget: BudgetReport
    counts: Counters
    warnings: list[str] = msgspec.field(default_factory=list)
    ttl_expiration: TTLExpirationResponse | None = None
    error: ErrorInfo | None = None
    converged: bool | None = None  # None when evaluation is off
    passes: int = 0
    answer: Any = None
    convergence: ConvergenceAssessment | None = None
    history: ExecutionHistory | None = None  # written by --history; the --json document leaves it out
    advisories: list[Advisory] = msgspec.field(default_factory=list)  # rejected refinements, manual work …
    tool_calls_not_made: list[MissingToolCall] = msgspec.field(default_factory=list)
    ledger: LedgerReport | None = None  # every LLM call; sums per phase, per pass and for the run
    pending_approval: ApprovalRequest | None = None  # the call a run awaiting approval waits on

    def with_lost_records(self, lost: LostRecords) -> RunResult:
        """This result when the run's event log lost records: an error whatever the run's own outcome, since the
        run can no longer be audited. The run's own error, if any, stays the error; the loss is always a warning."""
        noun = "record" if lost.count == 1 else "records"
        message = f"the event log lost {lost.count} {noun}: {lost.reason}"
        error = self.error or ErrorInfo(code=LOG_LOST, message=message, phase="", correlation_id=self.correlation_id)
        return msgspec.structs.replace(self, status=RunStatus.ERROR, error=error, warnings=[*self.warnings, message])


class RunEnded(msgspec.Struct, tag=True, frozen=True, kw_only=True):
    """The run ended: its whole `result`, as aeon.run returns it. The last event of every aeon.stream; JSON as the
    progress events are (`{"type": "RunEnded", "result": {...}}`), redacted like them."""

    result: RunResult


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
    )
