"""Walks one phase: entry/exit records with state and TTL snapshots, structured errors, one retry if retryable."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aeon.application.context import ContextViolation, RunContext
from aeon.application.errors import (
    BudgetExhausted,
    LLMContextExceeded,
    LLMEmptyAnswer,
    LLMError,
    LLMTruncated,
    LLMUnavailable,
    UnrecoverableOutput,
)
from aeon.domain.errors import AeonError
from aeon.domain.history import PhaseTiming
from aeon.domain.phases import (
    CONTEXT_PROPAGATION,
    CONTRACTS,
    PROVIDER_REJECTED,
    PROVIDER_UNAVAILABLE,
    FailureCondition,
    Phase,
    PhaseTransitionError,
)

T = TypeVar("T")

# component → (retryable code, markers of that malformation in the supervisor's errors, non-retryable code).
# A->B: only a JSON parse failure of the plan is retryable (05 FR-001); C->D: missing fields are too (FR-003).
_PARSE = ("not JSON", "truncated")
_BY_COMPONENT = {
    "planner": ("MALFORMED_PLAN", _PARSE, "INVALID_PLAN_STRUCTURE"),
    "profiler": ("INCOMPLETE_PROFILE", (), "INCOMPLETE_PROFILE"),
    "validator": ("MALFORMED_EVALUATION", (*_PARSE, "is a required property"), "INVALID_EVALUATION_STRUCTURE"),
    "convergence": ("MALFORMED_EVALUATION", (*_PARSE, "is a required property"), "INVALID_EVALUATION_STRUCTURE"),
}


class PhaseRunner:
    def __init__(self, ctx: RunContext) -> None:
        self._ctx = ctx
        self.timings: list[PhaseTiming] = []

    def error(self, transition: str, condition: FailureCondition, detail: str, component: str) -> PhaseTransitionError:
        ctx = self._ctx
        return PhaseTransitionError(
            condition,
            detail=detail,
            transition=transition,
            phase=Phase(CONTRACTS[transition].source),
            pass_number=ctx.pass_number,
            correlation_id=ctx.correlation_id,
            affected_component=component,
        )

    def classify(self, exc: Exception, transition: str, component: str) -> PhaseTransitionError:
        """Map a lower-level failure onto the transition contract's enumerated failure conditions."""
        contract = CONTRACTS[transition]
        if isinstance(exc, PhaseTransitionError):
            return exc
        if isinstance(exc, ContextViolation):
            return self.error(transition, CONTEXT_PROPAGATION, str(exc), component)
        if isinstance(exc, LLMUnavailable):
            return self.error(transition, PROVIDER_UNAVAILABLE, str(exc), component)
        # A cut-off or empty JSON answer is malformed (retryable); a full context window would only fill up again.
        cut_off = isinstance(exc, LLMTruncated | LLMEmptyAnswer) and not isinstance(exc, LLMContextExceeded)
        if cut_off and component in _BY_COMPONENT:
            return self.error(transition, contract.failure(_BY_COMPONENT[component][0]), str(exc), component)
        if isinstance(exc, LLMError):
            return self.error(transition, PROVIDER_REJECTED, str(exc), component)
        if isinstance(exc, UnrecoverableOutput) and component in _BY_COMPONENT:
            malformed, markers, structural = _BY_COMPONENT[component]
            is_malformed = bool(exc.errors) and all(any(m in e for m in markers) for e in exc.errors)
            code = malformed if is_malformed else structural
            return self.error(transition, contract.failure(code), str(exc), component)
        return self.error(transition, PROVIDER_REJECTED, f"{type(exc).__name__}: {exc}", component)

    async def step(self, transition: str, component: str, fn: Callable[[], Awaitable[T]], *, retry: bool = True) -> T:
        """Run one unit of phase work; a retryable contract failure is retried exactly once (05 FR-010).

        `retry=False` for work that cannot be repeated safely (a step already marked running); its failures are
        still classified into the contract's structured errors.
        """
        for attempt in (1, 2):
            try:
                return await fn()
            except BudgetExhausted:
                raise
            except (ContextViolation, LLMError, UnrecoverableOutput, PhaseTransitionError) as exc:
                err = self.classify(exc, transition, component)
                if retry and err.retryable and attempt == 1 and not isinstance(exc, LLMUnavailable):
                    # (an unavailable provider was already retried once by the gateway)
                    self._ctx.logger.emit("phase_retry", **err.record())
                    continue
                raise err from exc
        raise AssertionError("unreachable")

    async def phase(self, phase: Phase, transition: str, body: Callable[[], Awaitable[T]]) -> T:
        """Run a phase body between phase_entry and phase_exit records (05 FR-035..039)."""
        ctx = self._ctx
        start, t0, ttl_before = ctx.clock.now(), ctx.clock.monotonic(), ctx.budget.ttl_remaining
        before = self._snapshot()
        ctx.logger.emit(
            "phase_entry",
            phase=phase.value,
            pass_number=ctx.pass_number,
            transition=transition,
            state_before=before,
            ttl_snapshot={"ttl_before": ttl_before, "ttl_at_boundary": ttl_before},
        )
        ctx.notify("phase", {"phase": phase.value, "pass": ctx.pass_number})
        outcome = "failure"
        try:
            result = await body()
            outcome = "success"
            return result
        except BudgetExhausted:
            outcome = "expired"
            raise
        except asyncio.CancelledError:
            outcome = "interrupted"
            raise
        except AeonError as exc:  # every other failure inside a phase becomes a structured contract error
            err = self.classify(exc, transition, "orchestrator")
            ctx.logger.emit("phase_error", **err.record())
            if err is exc:
                raise
            raise err from exc
        finally:
            end = ctx.clock.now()
            duration = max(ctx.clock.monotonic() - t0, 0.0)
            self.timings.append(
                PhaseTiming(
                    phase=phase.value,
                    start_time=start.isoformat(),
                    end_time=end.isoformat(),
                    duration_seconds=duration,
                    outcome=outcome,
                )
            )
            ctx.logger.emit(
                "phase_exit",
                phase=phase.value,
                pass_number=ctx.pass_number,
                transition=transition,
                duration=round(duration, 6),
                outcome=outcome,
                state_before=before,
                state_after=self._snapshot(),
                ttl_snapshot={
                    "ttl_before": ttl_before,
                    "ttl_after": ctx.budget.ttl_remaining,
                    "ttl_at_boundary": ctx.budget.ttl_remaining,
                },
            )

    def _snapshot(self) -> dict[str, Any]:
        ctx = self._ctx
        plan = ctx.state.plan
        return {
            "plan_state": plan.to_dict() if plan else None,
            "ttl_remaining": ctx.budget.ttl_remaining,
            "phase_state": {"context": ctx.context_key, "pass_phase": ctx.phase, "pass_number": ctx.pass_number},
        }
