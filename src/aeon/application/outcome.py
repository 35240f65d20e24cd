"""How a run ends: step results, the TTL-expiration response, the structured error and the final RunResult."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from aeon.application.context import RunContext
from aeon.application.errors import BudgetExhausted
from aeon.application.result import ErrorInfo, RunResult, RunStatus
from aeon.application.semantic_validation import final_answer
from aeon.domain.budget import TTLExpirationResponse
from aeon.domain.errors import AeonError
from aeon.domain.evaluation import ConvergenceAssessment
from aeon.domain.history import ExecutionHistory, ExecutionPass
from aeon.domain.phases import PhaseTransitionError
from aeon.domain.plan import ExecutionMode, Plan

_b = msgspec.to_builtins


def step_results(plan: Plan | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in plan.steps if plan else []:
        out[s.step_id] = {"status": s.status.value, "output": s.step_output, "mode": s.mode, "errors": s.errors}
        if s.notes:
            out[s.step_id]["notes"] = s.notes
        if s.clarity_state is not None:
            out[s.step_id]["clarity_state"] = s.clarity_state.value
    return out


def pass_summary(xp: ExecutionPass) -> dict[str, Any]:
    return {
        "pass_number": xp.pass_number,
        "execution_results": xp.execution_results,
        "evaluation_results": xp.evaluation_results,
        "plan_state": xp.final_plan_state or xp.plan_state,
    }


def expiration(
    exc: BudgetExhausted,
    ctx: RunContext,
    *,
    completed: Sequence[ExecutionPass],
    cut: ExecutionPass | None,
    last: ConvergenceAssessment | None,
) -> TTLExpirationResponse:
    """The one expiry answer (05 FR-027, 02 FR-062): latest completed pass, or the cut pass when none completed."""
    metrics = {
        "completeness_score": last.scores.get("completeness_score") if last else None,
        "coherence_score": last.scores.get("coherence_score") if last else None,
        "consistency_status": last.scores.get("consistency_status") if last else None,
        "detected_issues": last.detected_issues if last else [],
        "reason_codes": last.reason_codes if last else ["ttl_expired"],
        "pass_number": ctx.pass_number,
    }
    plan = ctx.state.plan
    return TTLExpirationResponse(
        expiration_type=exc.expiration_type,
        cap=exc.cap,
        phase=exc.phase or ctx.phase_letter,
        pass_number=ctx.pass_number,
        plan_state=plan.to_dict() if plan else None,
        execution_results=step_results(plan),
        message=f"stopped, not converged: {exc}",
        latest_pass_result=pass_summary(completed[-1]) if completed else None,
        partial_result=pass_summary(cut) if cut is not None and not completed else None,
        ttl_expired_metadata=metrics,
    )


def error_info(exc: AeonError, ctx: RunContext) -> ErrorInfo:
    pte = exc if isinstance(exc, PhaseTransitionError) else None
    return ErrorInfo(
        code=exc.code,
        message=str(exc),
        phase=ctx.phase_letter,
        step_id=ctx.state.current_step,
        correlation_id=ctx.correlation_id,
        severity=pte.severity.value if pte else "ERROR",
        affected_component=pte.affected_component if pte else None,
        failure_condition=pte.failure_condition if pte else None,
        pass_number=ctx.pass_number,
    )


def assemble(
    ctx: RunContext,
    status: RunStatus,
    history: ExecutionHistory,
    *,
    last: ConvergenceAssessment | None,
    evaluate: bool,
    error: ErrorInfo | None,
    expired: TTLExpirationResponse | None,
) -> RunResult:
    """Close the history (final result, statistics) and build the RunResult."""
    b, plan = ctx.budget, ctx.state.plan
    converged = (last.converged if last else False) if evaluate else None
    answer = final_answer(plan) if plan else None
    history.final_result = {
        "converged": bool(converged),
        "result_type": "converged" if converged else status.value,
        "output": answer,
        "metadata": {
            "error": _b(error),
            "ttl_expiration": _b(expired),
            "manual_intervention": [a for a in history.advisories if a.get("kind") == "manual_intervention"],
        },
    }
    history.overall_statistics = {
        "total_passes": len(history.passes),
        "convergence_achieved": bool(converged),
        "total_refinements": sum(1 for p in history.passes for c in p.refinement_changes if c.get("applied")),
        "total_time_seconds": round(ctx.clock.monotonic() - ctx.t0, 6),
        "llm_calls": b.llm_calls,
        "prompt_tokens": b.prompt_tokens,
        "completion_tokens": b.completion_tokens,
        "cached_tokens": b.cached_tokens,
    }
    return RunResult(
        status=status,
        correlation_id=ctx.correlation_id,
        request=ctx.request,
        plan=plan.to_dict() if plan else None,
        outputs=step_results(plan),
        budget={
            "ttl": b.limits.ttl,
            "ttl_remaining": b.ttl_remaining,
            "max_llm_calls": b.limits.max_llm_calls,
            "llm_calls": b.llm_calls,
            "prompt_tokens": b.prompt_tokens,
            "completion_tokens": b.completion_tokens,
            "cached_tokens": b.cached_tokens,
        },
        counts=_b(ctx.counters),
        warnings=list(ctx.warnings),
        ttl_expiration=expired,
        error=error,
        converged=converged,
        passes=len(history.passes),
        answer=answer,
        convergence=_b(last),
        history=history,
        advisories=list(history.advisories),
        tool_calls_not_made=[
            {"step_id": s.step_id, "tool": s.tool, "args": s.args, "reason": "; ".join(s.errors)}
            for s in (plan.steps if plan else [])
            if s.mode is ExecutionMode.FALLBACK and s.tool is not None
        ],
    )
