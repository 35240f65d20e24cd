"""Walks one phase under its transition contract: entry/exit records with state and TTL snapshots, structured errors,
one retry when the contract calls a failure retryable, and the contract's inputs, outputs and invariants checked."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from aeon.application.errors import (
    ApprovalExpired,
    BudgetExhausted,
    ContextViolation,
    LLMContextExceeded,
    LLMEmptyAnswer,
    LLMError,
    LLMTooSlow,
    LLMTruncated,
    LLMUnavailable,
    OutputFault,
    UnrecoverableOutput,
)
from aeon.application.llm.calling import PhaseFrame
from aeon.application.llm.retry_budget import PHASE_ATTEMPTS
from aeon.application.policy import PolicyRefused
from aeon.domain.errors import AeonError
from aeon.domain.history import PhaseTiming
from aeon.domain.log_pass import PhaseEntryRecord, PhaseErrorRecord, PhaseExitRecord, PhaseRetryRecord
from aeon.domain.phases import (
    Component,
    FailureCondition,
    Halt,
    Invariant,
    Phase,
    PhaseTransitionError,
    Stage,
    Transition,
)
from aeon.domain.progress import PhaseEnded, PhaseOutcome, PhaseStarted
from aeon.domain.transitions import (
    CONTEXT_PROPAGATION,
    CONTRACTS,
    HANDS_OVER,
    ILLEGAL_TRANSITION,
    PRODUCES_FOR,
    PROVIDER_REJECTED,
    PROVIDER_TOO_SLOW,
    PROVIDER_UNAVAILABLE,
    SUCCESSORS,
)


class PhaseWork(Protocol):
    """A phase's result: its successor, and the values its contracts name as fields of the same names."""

    @property
    def next(self) -> Stage | Halt:
        """Where the loop goes after this phase; the runner holds it to the phase's contract."""
        ...


T = TypeVar("T")
W = TypeVar("W", bound=PhaseWork)

# component → (retryable code, the faults of an unrepaired answer a second ask may fix, non-retryable code).
# A->B: only a plan answer that is not JSON or is cut off is retried; C->D: one missing a field is too.
_UNPARSED = frozenset({OutputFault.NOT_JSON, OutputFault.CUT_OFF})
_BY_COMPONENT: dict[Component, tuple[str, frozenset[OutputFault], str]] = {
    Component.PLANNER: ("MALFORMED_PLAN", _UNPARSED, "INVALID_PLAN_STRUCTURE"),
    Component.PROFILER: ("INCOMPLETE_PROFILE", frozenset(), "INCOMPLETE_PROFILE"),
    Component.EVALUATOR: (
        "MALFORMED_EVALUATION",
        _UNPARSED | {OutputFault.MISSING_FIELD},
        "INVALID_EVALUATION_STRUCTURE",
    ),
}


class PhaseRunner:
    def __init__(self, run: PhaseFrame) -> None:
        self._run = run

    def error(
        self, transition: Transition, condition: FailureCondition, detail: str, component: Component
    ) -> PhaseTransitionError:
        s = self._run.state
        return PhaseTransitionError(
            condition,
            detail=detail,
            transition=transition,
            phase=CONTRACTS[transition].source,
            pass_number=s.pass_number,
            correlation_id=s.correlation_id,
            affected_component=component,
        )

    def classify(self, exc: Exception, transition: Transition, component: Component) -> PhaseTransitionError:
        """Map a lower-level failure onto the transition contract's enumerated failure conditions."""
        contract = CONTRACTS[transition]
        if isinstance(exc, PhaseTransitionError):
            return exc
        if isinstance(exc, ContextViolation):
            return self.error(transition, CONTEXT_PROPAGATION, str(exc), component)
        if isinstance(exc, LLMTooSlow):
            return self.error(transition, PROVIDER_TOO_SLOW, str(exc), component)
        if isinstance(exc, LLMUnavailable):
            return self.error(transition, PROVIDER_UNAVAILABLE, str(exc), component)
        # A cut-off or empty JSON answer is malformed (retryable); a full context window would only fill up again.
        cut_off = isinstance(exc, LLMTruncated | LLMEmptyAnswer) and not isinstance(exc, LLMContextExceeded)
        if cut_off and component in _BY_COMPONENT:
            return self.error(transition, contract.failure(_BY_COMPONENT[component][0]), str(exc), component)
        if isinstance(exc, LLMError):
            return self.error(transition, PROVIDER_REJECTED, str(exc), component)
        if isinstance(exc, UnrecoverableOutput) and component in _BY_COMPONENT:
            malformed, retried, structural = _BY_COMPONENT[component]
            code = malformed if exc.faults and exc.faults <= retried else structural
            return self.error(transition, contract.failure(code), str(exc), component)
        return self.error(transition, PROVIDER_REJECTED, f"{type(exc).__name__}: {exc}", component)

    async def step(
        self, transition: Transition, component: Component, fn: Callable[[], Awaitable[T]], *, retry: bool = True
    ) -> T:
        """Run one unit of phase work; a retryable contract failure is retried exactly once.

        `retry=False` for work that cannot be repeated safely (a step already marked running); its failures are
        still classified into the contract's structured errors.
        """
        for attempt in range(1, PHASE_ATTEMPTS + 1):
            try:
                return await fn()
            except (BudgetExhausted, ApprovalExpired, PolicyRefused):
                raise
            except (ContextViolation, LLMError, UnrecoverableOutput, PhaseTransitionError) as exc:
                err = self.classify(exc, transition, component)
                if retry and err.retryable and attempt < PHASE_ATTEMPTS and not isinstance(exc, LLMUnavailable):
                    # (an unavailable provider was already retried once by the gateway)
                    self._run.record.log(_failed(PhaseRetryRecord, err))
                    continue
                raise err from exc
        raise AssertionError("unreachable")

    async def phase(self, phase: Phase, body: Callable[[], Awaitable[W]]) -> W:
        """Run a phase body between phase_entry and phase_exit records, then hold it to its
        contracts: what it must produce for the previous transition and hand over to the next, and the invariants."""
        run, transition = self._run, HANDS_OVER[phase]
        start, t0, ttl_before = run.clock.now(), run.clock.monotonic(), run.state.budget.ttl_remaining
        before = self._snapshot()
        kept = (run.state.correlation_id, run.state.started_at, run.state.plan)
        ttl = {"ttl_before": ttl_before, "ttl_at_boundary": ttl_before}
        fields: dict[str, Any] = {"phase": phase.value, "pass_number": run.state.pass_number, "transition": transition}
        run.record.log(PhaseEntryRecord(**fields, state_before=before, ttl_snapshot=ttl))
        run.record.notify(PhaseStarted(phase=phase, pass_number=run.state.pass_number))
        outcome: PhaseOutcome = "failure"
        attrs = {"aeon.phase": phase.value, "aeon.pass_number": run.state.pass_number}
        with run.tracer.span(f"phase {phase.value}", attrs) as span:
            try:
                result = await body()
                self._hold_to_contracts(phase, result, kept)
                outcome = "success"
                return result
            except (BudgetExhausted, ApprovalExpired):
                outcome = "expired"
                raise
            except asyncio.CancelledError:
                outcome = "interrupted"
                raise
            except PolicyRefused:  # the run's own typed ending, not a broken contract
                raise
            except AeonError as exc:  # every other failure inside a phase becomes a structured contract error
                err = self.classify(exc, transition, Component.ORCHESTRATOR)
                run.record.log(_failed(PhaseErrorRecord, err))
                if err is exc:
                    raise
                raise err from exc
            finally:
                span.set({"aeon.outcome": outcome})
                self._exit(phase, fields, start, t0, before, outcome)

    def _hold_to_contracts(self, phase: Phase, result: PhaseWork, kept: tuple[Any, ...]) -> None:
        s = self._run.state
        produced = CONTRACTS[PRODUCES_FOR[phase]]
        handed = CONTRACTS[HANDS_OVER[phase]]
        # a phase's result names its fields as its contracts do (task_profile, refined_plan, execution_results …)
        values = {name: getattr(result, name, None) for name in (*produced.guaranteed_outputs, *handed.required_inputs)}
        if missing := produced.missing_outputs(values):
            detail = f"phase {phase.value} did not produce {', '.join(missing)}"
            raise self.error(produced.name, produced.failure(produced.incomplete), detail, Component.ORCHESTRATOR)
        if missing := handed.missing_inputs(values):
            detail = f"phase {phase.value} hands over without {', '.join(missing)}"
            raise self.error(handed.name, handed.failure(handed.incomplete), detail, Component.ORCHESTRATOR)
        if result.next not in SUCCESSORS[phase]:
            detail = f"phase {phase.value} names {result.next.value} as its next stage"
            raise self.error(handed.name, ILLEGAL_TRANSITION, detail, Component.ORCHESTRATOR)
        broken = [
            invariant
            for invariant, ok in (
                (Invariant.CORRELATION_ID, s.correlation_id == kept[0]),
                (Invariant.START_TIMESTAMP, s.started_at == kept[1]),
                (Invariant.PLAN_IDENTITY, kept[2] is None or s.plan is kept[2]),
            )
            if not ok
        ]
        if broken:
            raise self.error(handed.name, CONTEXT_PROPAGATION, f"broken: {'; '.join(broken)}", Component.ORCHESTRATOR)

    def _exit(
        self, phase: Phase, fields: dict[str, Any], start: Any, t0: float, before: dict[str, Any], outcome: PhaseOutcome
    ) -> None:
        run = self._run
        end = run.clock.now()
        duration = max(run.clock.monotonic() - t0, 0.0)
        timing = PhaseTiming(
            phase=phase.value,
            start_time=start.isoformat(),
            end_time=end.isoformat(),
            duration_seconds=duration,
            outcome=outcome,
        )
        run.state.phase_timed(timing)
        ttl_after = run.state.budget.ttl_remaining
        ttl = {"ttl_before": before["ttl_remaining"], "ttl_after": ttl_after, "ttl_at_boundary": ttl_after}
        state: dict[str, Any] = {"state_before": before, "state_after": self._snapshot(), "ttl_snapshot": ttl}
        run.record.log(PhaseExitRecord(**fields, duration=round(duration, 6), outcome=outcome, **state))
        pass_number = fields["pass_number"]
        ended = PhaseEnded(phase=phase, pass_number=pass_number, outcome=outcome, duration_seconds=round(duration, 6))
        run.record.notify(ended)

    def _snapshot(self) -> dict[str, Any]:
        run = self._run
        s = run.state
        phase_state = {"context": run.stage.value, "pass_phase": run.label.value, "pass_number": s.pass_number}
        return {
            "plan_state": run.record.snapshot(s.plan),
            "ttl_remaining": s.budget.ttl_remaining,
            "phase_state": phase_state,
        }


def _failed(kind: type[PhaseErrorRecord], err: PhaseTransitionError) -> PhaseErrorRecord:
    """The failure's record; the run it names is kept as `_correlation_id` (the log's own stamp wins the name)."""
    fields = err.record()
    return kind(run_id=fields.pop("correlation_id"), **fields)
