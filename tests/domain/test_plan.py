"""A plan's steps move through a fixed state machine, keep their order and numbering, and never lose what ran."""

from __future__ import annotations

import pytest

from aeon.domain.errors import IllegalTransition, PlanIntegrityError
from aeon.domain.plan import Plan, PlanStep, StepStatus

S = StepStatus


def step(sid: str, status: StepStatus = S.PENDING) -> PlanStep:
    return PlanStep(step_id=sid, description=f"do {sid}", status=status)


@pytest.mark.parametrize(
    ("start", "end"),
    [
        (S.PENDING, S.RUNNING),
        (S.PENDING, S.INVALID),
        (S.PENDING, S.FAILED),
        (S.RUNNING, S.COMPLETE),
        (S.RUNNING, S.FAILED),
        (S.RUNNING, S.INVALID),
        (S.INVALID, S.PENDING),
    ],
)
def test_a_legal_transition_moves_the_step(start, end):
    s = step("s1", start)
    s.transition(end)
    assert s.status is end


@pytest.mark.parametrize(
    ("start", "end"),
    [(S.PENDING, S.COMPLETE), (S.COMPLETE, S.RUNNING), (S.FAILED, S.PENDING), (S.COMPLETE, S.FAILED)],
)
def test_an_illegal_transition_names_the_step_and_both_states_and_changes_nothing(start, end):
    s = step("s1", start)
    with pytest.raises(IllegalTransition, match=f"step 's1': {start.value} -> {end.value} is not allowed"):
        s.transition(end)
    assert s.status is start


def test_a_finished_step_is_final():
    for final in (S.COMPLETE, S.FAILED):
        s = step("s1", final)
        assert s.executed
        for target in StepStatus:
            with pytest.raises(IllegalTransition):
                s.transition(target)


def test_a_blocked_step_is_invalid_with_its_reason_and_rearms_to_pending():
    s = step("s2")
    s.block(["s1"])
    assert s.status is S.INVALID and s.errors == ["dependencies not complete: s1"] and s.blocked_by == ["s1"]
    assert s.held_only_by_dependencies()
    s.rearm()
    assert s.status is S.PENDING and s.errors == [] and s.blocked_by == []


def test_a_blocked_step_with_another_error_is_not_held_only_by_its_dependencies():
    s = step("s2")
    s.errors = ["tool crashed"]
    s.block(["s1"])
    assert not s.held_only_by_dependencies()


def test_steps_are_numbered_in_order_and_renumbered_after_a_replacement():
    plan = Plan(goal="g", steps=[step("a"), step("b"), step("c")])
    assert [(s.step_index, s.total_steps) for s in plan.steps] == [(1, 3), (2, 3), (3, 3)]
    new = plan.replace_step("b", step("b"))
    assert plan.steps[1] is new and (new.step_index, new.total_steps) == (2, 3)


def test_a_replacement_must_keep_the_step_id():
    plan = Plan(goal="g", steps=[step("a")])
    with pytest.raises(PlanIntegrityError, match="carries step_id 'z'"):
        plan.replace_step("a", step("z"))
    assert plan.steps[0].step_id == "a"


@pytest.mark.parametrize("ran", [S.COMPLETE, S.FAILED])
def test_a_step_that_already_ran_cannot_be_replaced(ran):
    plan = Plan(goal="g", steps=[step("a", ran)])
    with pytest.raises(PlanIntegrityError, match="has already run"):
        plan.replace_step("a", step("a"))


def test_an_unknown_step_id_is_a_key_error():
    with pytest.raises(KeyError):
        Plan(goal="g", steps=[step("a")]).step("b")
