"""Phase vocabulary and the shape of 05's transition contracts (the contracts themselves: domain.transitions; the
context-propagation table: domain.context).

One vocabulary: a `Stage` is a unit of the loop (A profile and plan, B validate the plan, C1 execute, C2 evaluate,
C3 refine, D decide); its contract `Phase` (A, B, C, D) and its Sprint 2 `PassPhase` label (PLAN, EXECUTE, …) are
derived from it. One cycle is A|B → C → D.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import msgspec

from aeon.domain.errors import AeonError
from aeon.domain.evaluation import Severity


class Phase(enum.StrEnum):
    A = "A"
    B = "B"
    C = "C"
    D = "D"


class PassPhase(enum.StrEnum):
    """ExecutionPass.phase and the cycle record's phase: the Sprint 2 labels."""

    PLAN = "PLAN"
    EXECUTE = "EXECUTE"
    EVALUATE = "EVALUATE"
    REFINE = "REFINE"
    RE_EXECUTE = "RE_EXECUTE"


class Stage(enum.StrEnum):
    """A unit of one cycle; its value is its row in the context-propagation table."""

    PROFILE_AND_PLAN = "A"
    VALIDATE_PLAN = "B"
    EXECUTE = "C1"
    EVALUATE = "C2"
    REFINE = "C3"
    DECIDE = "D"

    @property
    def phase(self) -> Phase:
        return Phase(self.value[0])

    def label(self, pass_number: int) -> PassPhase:
        """The Sprint 2 label: PLAN for A and B, RE_EXECUTE for execution after the first pass, …"""
        if self is Stage.EXECUTE:
            return PassPhase.EXECUTE if pass_number <= 1 else PassPhase.RE_EXECUTE
        return _LABELS[self]


class Halt(enum.Enum):
    """Where a run goes after a phase D that decided to stop: no further stage."""

    HALT = "halt"


HALT = Halt.HALT

_LABELS = {
    Stage.PROFILE_AND_PLAN: PassPhase.PLAN,
    Stage.VALIDATE_PLAN: PassPhase.PLAN,
    Stage.EVALUATE: PassPhase.EVALUATE,
    Stage.REFINE: PassPhase.REFINE,
    Stage.DECIDE: PassPhase.EVALUATE,  # the decision is part of the pass's evaluation
}


class Transition(enum.StrEnum):
    """A transition of the four-phase loop; its value is the contract's name in records (`A->B` …)."""

    A_TO_B = "A->B"
    B_TO_C = "B->C"
    C_TO_D = "C->D"
    D_TO_A_OR_B = "D->A/B"


class Component(enum.StrEnum):
    """The part of the kernel a phase failure is laid at (`affected_component` in records)."""

    ORCHESTRATOR = "orchestrator"
    PROFILER = "profiler"
    PLANNER = "planner"
    VALIDATOR = "validator"
    EXECUTOR = "executor"
    EVALUATOR = "evaluator"
    REFINER = "refiner"
    EXECUTION_PASS = "execution_pass"


class FailureCondition(msgspec.Struct, frozen=True, kw_only=True):
    """One enumerated failure of a transition; `severity` is written as a log level (CRITICAL/ERROR/WARNING/INFO)."""

    code: str
    description: str
    retryable: bool
    severity: Severity = Severity.HIGH


class PhaseTransitionContract(msgspec.Struct, frozen=True, kw_only=True):
    """The contract of transition source → target, enforced by the phase runner.

    `required_inputs` must exist when the source phase hands over (checked after its work); `guaranteed_outputs`
    are what the next phase produces (checked after its work); `targets` are the legal next phases; `invariants`
    are checked around every phase (the runner names each one it finds broken).
    """

    name: Transition
    source: Phase
    targets: tuple[Phase, ...]
    required_inputs: tuple[str, ...]
    guaranteed_outputs: tuple[str, ...]
    invariants: tuple[Invariant, ...]
    failures: tuple[FailureCondition, ...]
    incomplete: str  # the failure code for a missing input or output

    def failure(self, code: str) -> FailureCondition:
        for f in self.failures:
            if f.code == code:
                return f
        raise KeyError(f"{self.name} has no failure condition {code}")

    def missing_inputs(self, values: Mapping[str, Any]) -> list[str]:
        return [k for k in self.required_inputs if blank(values.get(k))]

    def missing_outputs(self, values: Mapping[str, Any]) -> list[str]:
        return [k for k in self.guaranteed_outputs if blank(values.get(k))]


class Invariant(enum.StrEnum):
    """The five invariants every transition keeps (05, Phase Transition Invariants)."""

    CORRELATION_ID = "correlation_id unchanged"
    START_TIMESTAMP = "execution_start_timestamp unchanged"
    TTL_AT_ENTRY = "TTL_remaining > 0 at phase entry"
    PLAN_IDENTITY = "plan identity unchanged unless the phase replaces the plan by contract"
    NO_IMPLICIT_CONTEXT = "no memory context or external state introduced implicitly"


def blank(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict | tuple) and len(value) == 0)


class PhaseTransitionError(AeonError):
    """A structured phase failure: AEON.PHASE_TRANSITION.<CODE>, severity, component, condition, correlation id."""

    def __init__(
        self,
        condition: FailureCondition,
        *,
        detail: str,
        transition: Transition,
        phase: Phase,
        pass_number: int,
        correlation_id: str,
        affected_component: Component,
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
            "severity": self.severity.level,
            "affected_component": self.affected_component,
            "failure_condition": self.failure_condition,
            "detail": self.detail,
            "retryable": self.retryable,
            "correlation_id": self.correlation_id,
            "phase": self.phase.value,
            "pass_number": self.pass_number,
            "transition": self.transition,
        }
