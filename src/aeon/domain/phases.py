"""Phase-transition contracts and the context-propagation table (05 FR-001..021), as data the orchestrator walks.

Phases: A (profile + TTL allocation + initial plan), B (plan validation + pre-execution refinement), C (C1 execute,
C2 evaluate, C3 refine), D (adaptive-depth decision: continue / escalate / halt). One cycle is A|B → C → D.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import msgspec

from aeon.domain.errors import AeonError


class Phase(enum.StrEnum):
    A = "A"
    B = "B"
    C = "C"
    D = "D"


class PassPhase(enum.StrEnum):
    """ExecutionPass.phase values kept from Sprint 2."""

    PLAN = "PLAN"
    EXECUTE = "EXECUTE"
    EVALUATE = "EVALUATE"
    REFINE = "REFINE"
    RE_EXECUTE = "RE_EXECUTE"


class Severity(enum.StrEnum):
    CRITICAL = "CRITICAL"
    ERROR = "ERROR"
    WARNING = "WARNING"
    INFO = "INFO"


class FailureCondition(msgspec.Struct, frozen=True, kw_only=True):
    code: str
    description: str
    retryable: bool
    severity: Severity = Severity.ERROR


class PhaseTransitionContract(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    source: Phase
    targets: tuple[Phase, ...]
    required_inputs: tuple[str, ...]
    guaranteed_outputs: tuple[str, ...]
    invariants: tuple[str, ...]
    failures: tuple[FailureCondition, ...]

    def failure(self, code: str) -> FailureCondition:
        for f in self.failures:
            if f.code == code:
                return f
        raise KeyError(f"{self.name} has no failure condition {code}")

    def missing_inputs(self, values: Mapping[str, Any]) -> list[str]:
        return [k for k in self.required_inputs if _blank(values.get(k))]

    def missing_outputs(self, values: Mapping[str, Any]) -> list[str]:
        return [k for k in self.guaranteed_outputs if _blank(values.get(k))]


_INVARIANTS = (
    "correlation_id unchanged",
    "execution_start_timestamp unchanged",
    "TTL_remaining > 0 at phase entry",
    "plan identity unchanged unless the phase replaces the plan by contract",
    "no memory context or external state introduced implicitly",
)

# Failures every transition can meet, beyond its own list.
CONTEXT_PROPAGATION = FailureCondition(
    code="CONTEXT_PROPAGATION",
    description="a context field is missing, changed or prohibited",
    retryable=False,
    severity=Severity.CRITICAL,
)
PASS_CONSISTENCY = FailureCondition(
    code="PASS_CONSISTENCY",
    description="an ExecutionPass misses required fields or breaks a merge invariant",
    retryable=False,
    severity=Severity.CRITICAL,
)
PROVIDER_UNAVAILABLE = FailureCondition(
    code="PROVIDER_UNAVAILABLE",
    description="the LLM provider stayed unavailable through the HTTP retries",
    retryable=True,
)
PROVIDER_REJECTED = FailureCondition(
    code="PROVIDER_REJECTED",
    description="the LLM provider refused the request or its answer is unusable",
    retryable=False,
)
_COMMON = (CONTEXT_PROPAGATION, PASS_CONSISTENCY, PROVIDER_UNAVAILABLE, PROVIDER_REJECTED)

CONTRACTS: dict[str, PhaseTransitionContract] = {
    c.name: c
    for c in (
        PhaseTransitionContract(
            name="A->B",
            source=Phase.A,
            targets=(Phase.B,),
            required_inputs=("task_profile", "initial_plan", "ttl_remaining"),
            guaranteed_outputs=("refined_plan",),
            invariants=_INVARIANTS,
            failures=(
                FailureCondition(
                    code="INCOMPLETE_PROFILE", description="the task profile misses or breaks fields", retryable=False
                ),
                FailureCondition(
                    code="MALFORMED_PLAN", description="the plan answer could not be parsed as JSON", retryable=True
                ),
                FailureCondition(
                    code="INVALID_PLAN_STRUCTURE", description="the plan is not a valid plan structure", retryable=False
                ),
                *_COMMON,
            ),
        ),
        PhaseTransitionContract(
            name="B->C",
            source=Phase.B,
            targets=(Phase.C,),
            required_inputs=("refined_plan",),
            guaranteed_outputs=("execution_results",),
            invariants=_INVARIANTS,
            failures=(
                FailureCondition(code="MISSING_STEPS", description="the refined plan has no steps", retryable=False),
                FailureCondition(
                    code="INVALID_FRAGMENT_FIELDS", description="a step fragment misses required fields", retryable=True
                ),
                FailureCondition(
                    code="INVALID_FRAGMENT_STRUCTURE",
                    description="a step fragment is structurally invalid",
                    retryable=False,
                ),
                *_COMMON,
            ),
        ),
        PhaseTransitionContract(
            name="C->D",
            source=Phase.C,
            targets=(Phase.D,),
            required_inputs=("execution_results", "evaluation_results"),
            guaranteed_outputs=("depth_decision",),
            invariants=_INVARIANTS,
            failures=(
                FailureCondition(
                    code="MALFORMED_EVALUATION",
                    description="the evaluation answer misses required fields",
                    retryable=True,
                ),
                FailureCondition(
                    code="INVALID_EVALUATION_STRUCTURE",
                    description="the evaluation signals are structurally invalid",
                    retryable=False,
                ),
                *_COMMON,
            ),
        ),
        PhaseTransitionContract(
            name="D->A/B",
            source=Phase.D,
            targets=(Phase.A, Phase.B),
            required_inputs=("ttl_remaining", "depth_decision"),
            guaranteed_outputs=("next_pass_state",),
            invariants=_INVARIANTS,
            failures=(
                FailureCondition(
                    code="TTL_EXHAUSTED",
                    description="no TTL is left for another cycle",
                    retryable=False,
                    severity=Severity.WARNING,
                ),
                FailureCondition(
                    code="INVALID_DEPTH_TRANSITION",
                    description="the depth decision names no legal next phase",
                    retryable=False,
                ),
                *_COMMON,
            ),
        ),
    )
}


class ContextRule(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the context-propagation table (05 FR-012)."""

    key: str
    phase: Phase
    must_have: tuple[str, ...]
    may_modify: tuple[str, ...]
    prohibited: tuple[str, ...]
    must_pass_unchanged: tuple[str, ...] = ("correlation_id", "execution_start_timestamp")


_BASE = ("request", "pass_number", "phase", "ttl_remaining", "correlation_id", "execution_start_timestamp")

CONTEXT_SPEC: dict[str, ContextRule] = {
    r.key: r
    for r in (
        ContextRule(
            key="A",
            phase=Phase.A,
            must_have=_BASE,
            may_modify=("task_profile", "initial_plan"),
            prohibited=("execution_results", "evaluation_results", "refinement_changes"),
        ),
        ContextRule(
            key="B",
            phase=Phase.B,
            must_have=(*_BASE, "task_profile", "initial_plan"),
            may_modify=("refined_plan", "refinement_changes"),
            prohibited=("execution_results",),
        ),
        ContextRule(
            key="C1",
            phase=Phase.C,
            must_have=(*_BASE, "task_profile", "refined_plan"),
            may_modify=("execution_results",),
            prohibited=("evaluation_results", "refinement_changes"),
        ),
        ContextRule(
            key="C2",
            phase=Phase.C,
            must_have=(*_BASE, "task_profile", "plan_state", "execution_results"),
            may_modify=("evaluation_results",),
            prohibited=("refinement_changes",),
        ),
        ContextRule(
            key="C3",
            phase=Phase.C,
            must_have=(*_BASE, "task_profile", "plan_state", "execution_results", "evaluation_results"),
            may_modify=("refinement_changes",),
            prohibited=(),
        ),
        ContextRule(
            key="D",
            phase=Phase.D,
            must_have=(*_BASE, "task_profile", "plan_state", "evaluation_results"),
            may_modify=("adaptive_depth_decision", "updated_ttl"),
            prohibited=("initial_plan", "refined_plan"),
        ),
    )
}


def context_violations(
    rule: ContextRule, context: Mapping[str, Any], *, anchor: Mapping[str, Any], request: str
) -> list[str]:
    """What is wrong with `context` for this phase: missing or null fields, changed invariants, prohibited fields."""
    problems = [f"{k} is missing or empty" for k in rule.must_have if _blank(context.get(k))]
    for k in rule.must_pass_unchanged:
        if context.get(k) != anchor.get(k):
            problems.append(f"{k} changed from {anchor.get(k)!r} to {context.get(k)!r}")
    if context.get("request") != request:
        problems.append("request is not the original input")
    if context.get("phase") != rule.phase.value:
        problems.append(f"phase is {context.get('phase')!r}, expected {rule.phase.value!r}")
    problems += [f"{k} is prohibited in phase {rule.key}" for k in rule.prohibited if k in context]
    return problems


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict | tuple) and len(value) == 0)


class PhaseTransitionError(AeonError):
    """A structured phase failure: AEON.PHASE_TRANSITION.<CODE> with everything FR-009 asks for."""

    def __init__(
        self,
        condition: FailureCondition,
        *,
        detail: str,
        transition: str,
        phase: Phase,
        pass_number: int,
        correlation_id: str,
        affected_component: str,
    ) -> None:
        super().__init__(f"{detail} [{transition} {condition.code}]")
        self.code = f"AEON.PHASE_TRANSITION.{condition.code}"
        self.condition = condition
        self.retryable = condition.retryable
        self.severity = condition.severity
        self.failure_condition = condition.description
        self.detail = detail
        self.transition = transition
        self.phase = phase
        self.pass_number = pass_number
        self.correlation_id = correlation_id
        self.affected_component = affected_component

    def record(self) -> dict[str, Any]:
        return {
            "error_code": self.code,
            "severity": self.severity.value,
            "affected_component": self.affected_component,
            "failure_condition": self.failure_condition,
            "detail": self.detail,
            "retryable": self.retryable,
            "correlation_id": self.correlation_id,
            "phase": self.phase.value,
            "pass_number": self.pass_number,
            "transition": self.transition,
        }
