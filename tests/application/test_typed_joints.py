"""The kernel's joints are typed: transitions and components are enums, each phase names its successor and the
runner holds it to the contract, and a failure's kind is set where it is found, never read back from its text."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

import pytest

import aeon.application
from aeon.application.errors import OutputFault, OutputProblem, UnrecoverableOutput, missing_field
from aeon.application.kernel.phase_runner import PhaseRunner
from aeon.domain.phases import HALT, Component, Halt, Phase, PhaseTransitionError, Stage, Transition
from aeon.domain.plan import Plan, PlanStep
from aeon.domain.transitions import SUCCESSORS
from aeon.testing import new_run

APPLICATION = Path(aeon.application.__file__).parent


def _string_constants() -> list[tuple[str, str]]:
    found = []
    for path in APPLICATION.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append((path.name, node.value))
    return found


def test_no_transition_or_component_is_spelled_as_a_string_in_application():
    names = {t.value for t in Transition} | {c.value for c in Component}
    assert [(module, text) for module, text in _string_constants() if text in names] == []


def test_the_legal_successors_follow_the_contract_targets_and_only_phase_d_ends_a_run():
    assert {
        Phase.A: {Stage.VALIDATE_PLAN},
        Phase.B: {Stage.EXECUTE},
        Phase.C: {Stage.DECIDE},
        Phase.D: {Stage.PROFILE_AND_PLAN, Stage.VALIDATE_PLAN, HALT},
    } == SUCCESSORS


class _Checked:
    def __init__(self, next_stage: Stage | Halt) -> None:
        self._next = next_stage
        self.refined_plan = Plan(goal="g", steps=[PlanStep(step_id="s1", description="d")])
        self.next_pass_state = "state"

    @property
    def next(self) -> Stage | Halt:
        return self._next


@pytest.mark.parametrize("wrong", [Stage.DECIDE, Stage.PROFILE_AND_PLAN, HALT])
def test_a_phase_naming_a_successor_its_contract_does_not_allow_fails_the_run_with_a_structured_error(wrong):
    run = new_run(stage=Stage.VALIDATE_PLAN)
    runner = PhaseRunner(run)

    async def body() -> _Checked:
        return _Checked(wrong)

    with pytest.raises(PhaseTransitionError) as caught:
        asyncio.run(runner.phase(Phase.B, body))
    assert caught.value.code == "AEON.PHASE_TRANSITION.ILLEGAL_TRANSITION"
    assert caught.value.transition is Transition.B_TO_C and caught.value.retryable is False


def test_a_phase_naming_a_legal_successor_passes():
    run = new_run(stage=Stage.VALIDATE_PLAN)

    async def body() -> _Checked:
        return _Checked(Stage.EXECUTE)

    assert asyncio.run(PhaseRunner(run).phase(Phase.B, body)).next is Stage.EXECUTE


def _classified(errors: list[str], component: Component, transition: Transition) -> str:
    exc = UnrecoverableOutput("gave up", target="t", errors=errors, llm_repairs=2)
    return PhaseRunner(new_run()).classify(exc, transition, component).condition.code


def test_an_evaluation_answer_missing_a_field_is_retryable_whatever_the_problem_says():
    errors = [missing_field("the judgement leaves out its completeness")]
    assert _classified(errors, Component.EVALUATOR, Transition.C_TO_D) == "MALFORMED_EVALUATION"


def test_a_problem_that_merely_reads_like_jsonschema_is_not_taken_for_a_missing_field():
    errors = ["(root): 'issues' is a required property"]  # a plain string: its kind is unknown, so invalid
    assert _classified(errors, Component.EVALUATOR, Transition.C_TO_D) == "INVALID_EVALUATION_STRUCTURE"


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        (OutputFault.NOT_JSON, "MALFORMED_PLAN"),
        (OutputFault.CUT_OFF, "MALFORMED_PLAN"),
        (OutputFault.MISSING_FIELD, "INVALID_PLAN_STRUCTURE"),  # a plan is retried only when it could not be read
        (OutputFault.INVALID, "INVALID_PLAN_STRUCTURE"),
    ],
)
def test_a_plan_answer_is_classified_by_the_kind_of_its_problems(kind, code):
    errors = [OutputProblem("something is wrong", kind)]
    assert _classified(errors, Component.PLANNER, Transition.A_TO_B) == code


def test_a_problem_keeps_its_kind_through_a_copy():
    import copy
    import pickle

    problem = OutputProblem("cut", OutputFault.CUT_OFF)
    assert pickle.loads(pickle.dumps(problem)).kind is OutputFault.CUT_OFF
    assert copy.copy(problem).kind is OutputFault.CUT_OFF and problem == "cut"


# -- each stage and service receives what it uses ------------------------------------------------------------------
STAGES = APPLICATION / "kernel" / "stages"


def _stage_functions() -> list[Any]:
    import importlib
    import inspect

    found = []
    for path in sorted(STAGES.glob("*.py")):
        module = importlib.import_module(f"aeon.application.kernel.stages.{path.stem}")
        found += [
            f for _, f in inspect.getmembers(module, inspect.iscoroutinefunction) if f.__module__ == module.__name__
        ]
    return found


def test_no_stage_takes_the_whole_service_bag():
    import typing

    from aeon.application.kernel.wiring import RunServices

    functions = _stage_functions()
    assert len(functions) >= 7
    for fn in functions:
        assert RunServices not in typing.get_type_hints(fn).values(), fn.__qualname__


@pytest.mark.parametrize(("module", "bundle"), [("plan", "Planning"), ("check", "Checking"), ("work", "Working")])
def test_a_stage_reads_every_collaborator_it_is_given(module, bundle):
    from dataclasses import fields

    from aeon.application.kernel import wiring

    tree = ast.parse((STAGES / f"{module}.py").read_text())
    read = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and getattr(n.value, "id", "") == "services"}
    assert read == {f.name for f in fields(getattr(wiring, bundle))}


def test_the_supervisor_gets_the_recorder_and_the_counters_not_the_run():
    import typing

    from aeon.application.kernel.run import Run
    from aeon.application.llm.supervisor import Supervisor

    assert Run not in typing.get_type_hints(Supervisor.__init__).values()


def test_the_stages_use_no_one_letter_handles():
    short = {"k", "s", "xp", "b"}
    for path in STAGES.glob("*.py"):
        names = {n.id for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Name)}
        assert not names & short, (path.name, names & short)


# -- each stage's input is its row of the propagation table --------------------------------------------------------
def test_a_stage_input_requires_what_its_row_must_have_and_has_no_field_its_row_prohibits():
    import types
    import typing

    from aeon.domain.context import BASE, CONTEXT_SPEC, INPUTS

    for stage, rule in CONTEXT_SPEC.items():
        kind = INPUTS[stage]
        hints = typing.get_type_hints(kind)
        for name in set(rule.must_have) - set(BASE):
            hint = hints[name]
            optional = isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint)
            assert not optional, (stage, name)
        assert not set(rule.prohibited) & set(kind.__struct_fields__), stage


def test_the_test_double_run_enters_its_stage_with_the_stage_s_own_input_type():
    from aeon.domain.context import required

    for stage in Stage:
        run = new_run(stage=stage)
        run.guard.check()  # a well-formed context for the row
        assert run.stage is stage and set(required(stage)) <= set(run.guard.context)


def test_the_loop_changes_the_run_state_only_through_its_named_records():
    """In the stages, the loop and the pass bookkeeping, no field of the state is assigned or appended to directly:
    each change is a RunState method named by what it records."""
    paths = [*STAGES.glob("*.py"), APPLICATION / "kernel" / "orchestrator.py", APPLICATION / "kernel" / "passes.py"]

    def on_state(node: ast.expr) -> bool:
        inner = node.value if isinstance(node, ast.Attribute) else None
        return (isinstance(inner, ast.Name) and inner.id == "state") or (
            isinstance(inner, ast.Attribute) and inner.attr == "state"
        )

    direct = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AugAssign)
                else []
            )
            for target in targets:
                for part in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if isinstance(part, ast.Attribute) and on_state(part):
                        direct.append((path.name, node.lineno))
            call = node.func if isinstance(node, ast.Call) else None
            if isinstance(call, ast.Attribute) and call.attr in ("append", "extend") and on_state(call.value):
                direct.append((path.name, node.lineno))
    assert direct == []


@pytest.mark.parametrize(
    ("phase", "result"),
    [
        (Phase.A, "aeon.application.kernel.stages.plan:PlanReady"),
        (Phase.B, "aeon.application.kernel.stages.check:PlanChecked"),
        (Phase.C, "aeon.application.kernel.stages.work:PassWork"),
        (Phase.D, "aeon.application.kernel.stages.decide:Decided"),
    ],
)
def test_a_phase_result_has_a_field_for_every_value_its_contracts_name(phase, result):
    import importlib

    from aeon.domain.transitions import CONTRACTS, HANDS_OVER, PRODUCES_FOR

    module, name = result.split(":")
    kind = getattr(importlib.import_module(module), name)
    named = {*CONTRACTS[PRODUCES_FOR[phase]].guaranteed_outputs, *CONTRACTS[HANDS_OVER[phase]].required_inputs}
    assert named <= set(kind.__struct_fields__)
