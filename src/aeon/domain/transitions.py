"""The transition contracts of 05, as data: what each phase needs and guarantees, where it may go, how it fails
(their vocabulary: domain.phases)."""

from __future__ import annotations

from aeon.domain.evaluation import Severity
from aeon.domain.phases import (
    HALT,
    FailureCondition,
    Halt,
    Invariant,
    Phase,
    PhaseTransitionContract,
    Stage,
    Transition,
)

# Failures every transition can meet, beyond its own list.
CONTEXT_PROPAGATION = FailureCondition(
    code="CONTEXT_PROPAGATION",
    description="a context field is missing, changed or prohibited, or a transition invariant is broken",
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
PROVIDER_TOO_SLOW = FailureCondition(
    code="PROVIDER_TOO_SLOW",
    description="the LLM answered nothing within llm.read_timeout through the HTTP retries: slow, not unavailable",
    retryable=False,
)
PROVIDER_REJECTED = FailureCondition(
    code="PROVIDER_REJECTED",
    description="the LLM provider refused the request or its answer is unusable",
    retryable=False,
)
ILLEGAL_TRANSITION = FailureCondition(
    code="ILLEGAL_TRANSITION",
    description="a phase named a next stage that its transition contract does not allow",
    retryable=False,
    severity=Severity.CRITICAL,
)
_COMMON = (
    CONTEXT_PROPAGATION,
    PASS_CONSISTENCY,
    PROVIDER_UNAVAILABLE,
    PROVIDER_TOO_SLOW,
    PROVIDER_REJECTED,
    ILLEGAL_TRANSITION,
)


def _contract(
    name: Transition,
    source: Phase,
    targets: tuple[Phase, ...],
    inputs: tuple[str, ...],
    outputs: tuple[str, ...],
    incomplete: str,
    *own: FailureCondition,
) -> PhaseTransitionContract:
    return PhaseTransitionContract(
        name=name, source=source, targets=targets, required_inputs=inputs, guaranteed_outputs=outputs,
        invariants=tuple(Invariant), failures=(*own, *_COMMON), incomplete=incomplete,
    )  # fmt: skip


CONTRACTS: dict[Transition, PhaseTransitionContract] = {
    c.name: c
    for c in (
        _contract(
            Transition.A_TO_B,
            Phase.A,
            (Phase.B,),
            ("task_profile", "initial_plan", "ttl_remaining"),
            ("refined_plan",),
            "INCOMPLETE_PROFILE",
            FailureCondition(
                code="INCOMPLETE_PROFILE", description="the task profile misses or breaks fields", retryable=False
            ),
            FailureCondition(
                code="MALFORMED_PLAN", description="the plan answer could not be parsed as JSON", retryable=True
            ),
            FailureCondition(
                code="INVALID_PLAN_STRUCTURE", description="the plan is not a valid plan structure", retryable=False
            ),
        ),
        _contract(
            Transition.B_TO_C,
            Phase.B,
            (Phase.C,),
            ("refined_plan",),
            ("execution_results",),
            "MISSING_STEPS",
            FailureCondition(code="MISSING_STEPS", description="the refined plan has no steps", retryable=False),
            FailureCondition(
                code="INVALID_FRAGMENT_FIELDS", description="a step fragment misses required fields", retryable=True
            ),
            FailureCondition(
                code="INVALID_FRAGMENT_STRUCTURE",
                description="a step fragment is structurally invalid",
                retryable=False,
            ),
        ),
        _contract(
            Transition.C_TO_D,
            Phase.C,
            (Phase.D,),
            ("execution_results", "evaluation_results"),
            ("depth_decision",),
            "INVALID_EVALUATION_STRUCTURE",
            FailureCondition(
                code="MALFORMED_EVALUATION", description="the evaluation answer misses required fields", retryable=True
            ),
            FailureCondition(
                code="INVALID_EVALUATION_STRUCTURE",
                description="the evaluation signals are structurally invalid",
                retryable=False,
            ),
        ),
        _contract(
            Transition.D_TO_A_OR_B,
            Phase.D,
            (Phase.A, Phase.B),
            ("ttl_remaining", "depth_decision"),
            ("next_pass_state",),
            "INVALID_DEPTH_TRANSITION",
            FailureCondition(
                code="TTL_EXHAUSTED",
                description="no TTL is left for another cycle",
                retryable=False,
                severity=Severity.MEDIUM,
            ),
            FailureCondition(
                code="INVALID_DEPTH_TRANSITION",
                description="the depth decision names no legal next phase",
                retryable=False,
            ),
        ),
    )
}
# The transition a phase hands over by, and the one whose guaranteed outputs it produces.
HANDS_OVER = {
    Phase.A: Transition.A_TO_B,
    Phase.B: Transition.B_TO_C,
    Phase.C: Transition.C_TO_D,
    Phase.D: Transition.D_TO_A_OR_B,
}
PRODUCES_FOR = {
    Phase.B: Transition.A_TO_B,
    Phase.C: Transition.B_TO_C,
    Phase.D: Transition.C_TO_D,
    Phase.A: Transition.D_TO_A_OR_B,
}
# The stage of the loop that enters each phase (C2 and C3 run inside phase C, entered by C1).
ENTERS = {Phase.A: Stage.PROFILE_AND_PLAN, Phase.B: Stage.VALIDATE_PLAN, Phase.C: Stage.EXECUTE, Phase.D: Stage.DECIDE}
# Where the loop may go after each phase: the targets of the contract it hands over by; only phase D ends a run.
SUCCESSORS: dict[Phase, frozenset[Stage | Halt]] = {
    phase: frozenset({ENTERS[p] for p in CONTRACTS[t].targets} | ({HALT} if phase is Phase.D else set()))
    for phase, t in HANDS_OVER.items()
}
