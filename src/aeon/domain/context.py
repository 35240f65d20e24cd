"""What each stage may see (05, context propagation): its typed input, and the propagation table derived from it.

A stage's input type is the one place its context fields are named: a field the table says the stage must have is
a required field; one it must not see is not a field at all. Every LLM call's context is the base fields plus the
input of the stage it runs in, checked against its row before the call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from aeon.domain.history import Evaluation, StepResult
from aeon.domain.phases import Phase, Stage, blank
from aeon.domain.plan import Plan
from aeon.domain.profile import TaskProfile

EVALUATION_OFF = "evaluation is off"  # what phase D sees for the evaluation with run.evaluate: false
BASE = ("request", "pass_number", "phase", "ttl_remaining", "correlation_id", "execution_start_timestamp")


class ProfileAndPlanInput(msgspec.Struct, frozen=True, kw_only=True):
    stage: ClassVar[Stage] = Stage.PROFILE_AND_PLAN
    task_profile: TaskProfile | None = None  # known once profiled: the planning call sees it


class ValidatePlanInput(msgspec.Struct, frozen=True, kw_only=True):
    stage: ClassVar[Stage] = Stage.VALIDATE_PLAN
    task_profile: TaskProfile
    initial_plan: Plan


class ExecuteInput(msgspec.Struct, frozen=True, kw_only=True):
    stage: ClassVar[Stage] = Stage.EXECUTE
    task_profile: TaskProfile
    refined_plan: Plan


class EvaluateInput(msgspec.Struct, frozen=True, kw_only=True):
    stage: ClassVar[Stage] = Stage.EVALUATE
    task_profile: TaskProfile
    plan_state: Plan
    execution_results: Mapping[str, StepResult]


class RefineInput(msgspec.Struct, frozen=True, kw_only=True):
    stage: ClassVar[Stage] = Stage.REFINE
    task_profile: TaskProfile
    plan_state: Plan
    execution_results: Mapping[str, StepResult]
    evaluation_results: Evaluation


class DecideInput(msgspec.Struct, frozen=True, kw_only=True):
    stage: ClassVar[Stage] = Stage.DECIDE
    task_profile: TaskProfile
    plan_state: Plan
    evaluation_results: Evaluation | str  # with evaluation off, the reason there is none


StageInput = ProfileAndPlanInput | ValidatePlanInput | ExecuteInput | EvaluateInput | RefineInput | DecideInput
INPUTS: dict[Stage, type[StageInput]] = {
    t.stage: t for t in (ProfileAndPlanInput, ValidatePlanInput, ExecuteInput, EvaluateInput, RefineInput, DecideInput)
}


def required(stage: Stage) -> tuple[str, ...]:
    """The input fields of `stage` without a default: what its context must hold."""
    kind = INPUTS[stage]
    names = kind.__struct_fields__
    return names[: len(names) - len(kind.__struct_defaults__)]


def context_of(given: StageInput) -> dict[str, Any]:
    """The stage's fields of a context: the input's fields that hold a value (references, nothing copied)."""
    values = ((name, getattr(given, name)) for name in given.__struct_fields__)
    return {name: value for name, value in values if value is not None}


class ContextRule(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the context-propagation table: what an LLM call's context must and must not hold.

    What a stage may produce is what the next rows must have; nothing else is in a context (no implicit memory)."""

    stage: Stage
    must_have: tuple[str, ...]
    prohibited: tuple[str, ...]
    must_pass_unchanged: tuple[str, ...] = ("correlation_id", "execution_start_timestamp")

    @property
    def phase(self) -> Phase:
        return self.stage.phase


# What each stage must not see (05); its input type has no such field, the guard checks it still.
_PROHIBITED = {
    Stage.PROFILE_AND_PLAN: ("execution_results", "evaluation_results", "refinement_changes"),
    Stage.VALIDATE_PLAN: ("execution_results",),
    Stage.EXECUTE: ("evaluation_results", "refinement_changes"),
    Stage.EVALUATE: ("refinement_changes",),
    Stage.REFINE: (),
    Stage.DECIDE: ("initial_plan", "refined_plan"),
}
CONTEXT_SPEC: dict[Stage, ContextRule] = {
    stage: ContextRule(stage=stage, must_have=(*BASE, *required(stage)), prohibited=prohibited)
    for stage, prohibited in _PROHIBITED.items()
}


def context_violations(
    rule: ContextRule, context: Mapping[str, Any], *, anchor: Mapping[str, Any], request: str
) -> list[str]:
    """What is wrong with `context` for this stage: missing or null fields, changed invariants, prohibited fields."""
    problems = [f"{k} is missing or empty" for k in rule.must_have if blank(context.get(k))]
    for k in rule.must_pass_unchanged:
        if context.get(k) != anchor.get(k):
            problems.append(f"{k} changed from {anchor.get(k)!r} to {context.get(k)!r}")
    if context.get("request") != request:
        problems.append("request is not the original input")
    if context.get("phase") != rule.stage.phase.value:
        problems.append(f"phase is {context.get('phase')!r}, expected {rule.stage.phase.value!r}")
    problems += [f"{k} is prohibited in phase {rule.stage.value}" for k in rule.prohibited if k in context]
    return problems
