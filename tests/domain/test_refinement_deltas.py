"""Refinement deltas: each action on pending steps, rejection on executed ones, replay, and a property over any mix."""

from __future__ import annotations

import copy

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aeon.domain.errors import PlanIntegrityError
from aeon.domain.evaluation import IssueType, Severity, ValidationIssue
from aeon.domain.plan import Plan, PlanStep, StepStatus
from aeon.domain.refinement import (
    MAX_DEPTH,
    ActionOutcome,
    RefinementAction,
    RefinementActionType,
    Subplan,
    apply_actions,
    replay,
)

A = RefinementActionType


def _issue(location: dict[str, str] | None) -> ValidationIssue:
    """A validation issue the refinement was based on, pinned to `location`."""
    return ValidationIssue(
        issue_id="V1", type=IssueType.CONSISTENCY, severity=Severity.HIGH, description="contradicts", location=location
    )


def _plan() -> Plan:
    return Plan(
        goal="answer the question",
        steps=[
            PlanStep(step_id="s1", description="look up", status=StepStatus.COMPLETE, step_output="42"),
            PlanStep(
                step_id="s2", description="compute", status=StepStatus.FAILED, errors=["boom"], dependencies=["s1"]
            ),
            PlanStep(step_id="s3", description="draft", dependencies=["s1"], provides=["draft"]),
            PlanStep(step_id="s4", description="answer", dependencies=["s3"], provides=["answer"]),
        ],
    )


def _step(step_id: str, description: str = "new", **kw: object) -> PlanStep:
    return PlanStep(step_id=step_id, description=description, **kw)


def _act(action_type: A, **kw: object) -> RefinementAction:
    return RefinementAction(action_type=action_type, justification="validator found a gap", **kw)


def _subplan(parent: str, substeps: list[PlanStep], depth: int = 1) -> Subplan:
    return Subplan(
        parent_step_id=parent, subplan_goal="split it", substeps=substeps, depth_level=depth, created_by="refinement"
    )


def _ids(plan: Plan) -> list[str]:
    return [s.step_id for s in plan.steps]


def _enc(obj: object) -> bytes:
    return msgspec.json.encode(obj)


def _enc_result(step: PlanStep) -> bytes:
    """A step's bytes without its position fields, which Plan.reindex owns and inserts or removals shift."""
    return _enc(msgspec.structs.replace(step, step_index=0, total_steps=0))


def _assert_indices(plan: Plan) -> None:
    n = len(plan.steps)
    assert [s.step_index for s in plan.steps] == list(range(1, n + 1))
    assert all(s.total_steps == n for s in plan.steps)


def _apply_one(plan: Plan, action: RefinementAction) -> ActionOutcome:
    (outcome,) = apply_actions(plan, [action])
    return outcome


def test_add_inserts_a_pending_step_after_the_named_step():
    plan = _plan()
    out = _apply_one(plan, _act(A.ADD, new_step=_step("s3b", status=StepStatus.COMPLETE), position_after="s3"))
    assert out.applied and not out.advisory and out.reason == ""
    assert _ids(plan) == ["s1", "s2", "s3", "s3b", "s4"]
    assert plan.step("s3b").status is StepStatus.PENDING
    _assert_indices(plan)


def test_add_without_position_appends_at_the_end():
    plan = _plan()
    assert _apply_one(plan, _act(A.ADD, new_step=_step("s5"))).applied
    assert _ids(plan) == ["s1", "s2", "s3", "s4", "s5"]
    assert plan.step("s5").step_index == 5 and plan.step("s1").total_steps == 5


def test_add_before_an_executed_step_is_rejected():
    plan = _plan()
    before = _enc(plan)
    out = _apply_one(plan, _act(A.ADD, new_step=_step("x"), position_after="s1"))
    assert not out.applied and out.advisory
    assert out.reason == "would insert before executed step s2 (failed)"
    assert _enc(plan) == before


def test_add_with_a_duplicate_step_id_is_rejected():
    plan = _plan()
    before = _enc(plan)
    out = _apply_one(plan, _act(A.ADD, new_step=_step("s3")))
    assert not out.applied and out.advisory and out.reason == "step id s3 already exists"
    assert _enc(plan) == before


def test_modify_refines_the_pending_step_in_place_and_keeps_its_id():
    plan = _plan()
    target = plan.step("s3")
    new = _step("other", "better draft", status=StepStatus.FAILED, errors=["old"], step_output="x", provides=["d2"])
    assert _apply_one(plan, _act(A.MODIFY, target_step_id="s3", new_step=new)).applied
    assert plan.steps[2] is target
    assert (target.step_id, target.description, target.provides) == ("s3", "better draft", ["d2"])
    assert (target.status, target.errors, target.step_output) == (StepStatus.PENDING, [], None)
    _assert_indices(plan)


def test_modify_returns_an_invalid_step_to_pending():
    plan = _plan()
    plan.step("s3").transition(StepStatus.INVALID)
    assert _apply_one(plan, _act(A.MODIFY, target_step_id="s3", new_step=_step("s3", "fixed"))).applied
    assert plan.step("s3").status is StepStatus.PENDING


def test_replace_swaps_in_a_new_step_with_the_target_id_at_the_same_position():
    plan = _plan()
    old = plan.step("s4")
    assert _apply_one(plan, _act(A.REPLACE, target_step_id="s4", new_step=_step("zz", "final answer"))).applied
    assert _ids(plan) == ["s1", "s2", "s3", "s4"]
    assert plan.steps[3] is not old and plan.steps[3].description == "final answer"
    _assert_indices(plan)


def test_remove_deletes_the_pending_step_and_drops_dependencies_on_it():
    plan = _plan()
    assert _apply_one(plan, _act(A.REMOVE, target_step_id="s3")).applied
    assert _ids(plan) == ["s1", "s2", "s4"]
    assert plan.step("s4").dependencies == []
    assert plan.step("s2").dependencies == ["s1"]
    _assert_indices(plan)


def test_step_mark_invalid_marks_a_pending_step():
    plan = _plan()
    assert _apply_one(plan, _act(A.STEP_MARK_INVALID, target_step_id="s4")).applied
    assert plan.step("s4").status is StepStatus.INVALID


def test_subplan_replaces_the_parent_by_ordered_substeps_with_stable_ids():
    plan = _plan()
    subs = [_step("a", "outline"), _step("b", "write", dependencies=["a"]), _step("c", "polish", provides=["text"])]
    out = _apply_one(plan, _act(A.SUBPLAN_CREATE, target_step_id="s3", subplan=_subplan("s3", subs, depth=2)))
    assert out.applied and out.action.subplan is not None and out.action.subplan.depth_level == 2
    assert _ids(plan) == ["s1", "s2", "s3.1", "s3.2", "s3.3", "s4"]
    assert [plan.step(i).dependencies for i in ("s3.1", "s3.2", "s3.3")] == [["s1"], ["s3.1"], ["s3.2"]]
    assert plan.step("s3.3").provides == ["text", "draft"]
    assert plan.step("s4").dependencies == ["s3.3"]
    _assert_indices(plan)


def test_subplan_keeps_substep_ids_already_prefixed_by_the_parent():
    plan = _plan()
    subs = [_step("s4.first"), _step("second")]
    assert _apply_one(plan, _act(A.SUBPLAN_CREATE, subplan=_subplan("s4", subs))).applied
    assert _ids(plan) == ["s1", "s2", "s3", "s4.first", "s4.2"]


def test_subplan_deeper_than_the_maximum_is_rejected_for_manual_intervention():
    plan = _plan()
    before = _enc(plan)
    out = _apply_one(plan, _act(A.SUBPLAN_CREATE, subplan=_subplan("s3", [_step("a")], depth=MAX_DEPTH + 1)))
    assert (out.applied, out.advisory, out.manual_intervention) == (False, True, True)
    assert out.reason == "depth 6 exceeds maximum 5"
    assert _enc(plan) == before


@pytest.mark.parametrize(
    ("subplan", "reason"),
    [
        (Subplan(parent_step_id="s", subplan_goal=" ", substeps=[_step("a")], depth_level=1, created_by="r"), "goal"),
        (Subplan(parent_step_id="s", subplan_goal="g", substeps=[], depth_level=1, created_by="r"), "no substeps"),
        (Subplan(parent_step_id="s", subplan_goal="g", substeps=[_step("a")], depth_level=0, created_by="r"), "below"),
    ],
)
def test_malformed_subplans_name_their_problem(subplan: Subplan, reason: str):
    assert reason in (subplan.problem() or "")
    assert _subplan("s", [_step("a")], depth=MAX_DEPTH).problem() is None


_ON_TARGET = {
    A.ADD: lambda t: _act(A.ADD, new_step=_step("new"), position_after=t),
    A.MODIFY: lambda t: _act(A.MODIFY, target_step_id=t, new_step=_step(t, "rewritten")),
    A.REMOVE: lambda t: _act(A.REMOVE, target_step_id=t),
    A.REPLACE: lambda t: _act(A.REPLACE, target_step_id=t, new_step=_step(t, "rewritten")),
    A.SUBPLAN_CREATE: lambda t: _act(A.SUBPLAN_CREATE, target_step_id=t, subplan=_subplan(t, [_step("a")])),
    A.STEP_MARK_INVALID: lambda t: _act(A.STEP_MARK_INVALID, target_step_id=t),
}


# Every type once, each on a step that is still there: REMOVE last, the subplan on s4 before s3 is removed.
_MIXED = [_ON_TARGET[t]("s4" if t is A.SUBPLAN_CREATE else "s3") for t in A if t is not A.REMOVE] + [
    _ON_TARGET[A.REMOVE]("s3")
]


@pytest.mark.parametrize("target", ["s1", "s2"])
@pytest.mark.parametrize("action_type", [t for t in A if t is not A.ADD])
def test_actions_on_an_executed_step_are_advisory_and_change_nothing(action_type: A, target: str):
    plan = _plan()
    before_plan, before_step = _enc(plan), _enc(plan.step(target))
    out = _apply_one(plan, _ON_TARGET[action_type](target))
    status = plan.step(target).status.value
    assert (out.applied, out.advisory, out.reason) == (False, True, f"targets executed step {target} ({status})")
    assert _enc(plan.step(target)) == before_step
    assert _enc(plan) == before_plan


@pytest.mark.parametrize("action_type", list(A))
def test_each_action_type_applies_to_a_pending_step(action_type: A):
    plan = _plan()
    assert _apply_one(plan, _ON_TARGET[action_type]("s3")).applied


def test_every_applied_action_keeps_indices_consistent_and_edits_the_same_plan_objects():
    plan = _plan()
    steps_list, executed = plan.steps, plan.steps[:2]
    for action in _MIXED:
        assert _apply_one(plan, action).applied
        assert plan.steps is steps_list
        assert all(a is b for a, b in zip(plan.steps[:2], executed, strict=True))
        _assert_indices(plan)


def test_inconsistency_reports_contradicted_executed_steps_without_changing_them():
    plan = _plan()
    executed_before = [_enc(s) for s in plan.steps[:2]]
    issues = [_issue({"step_id": "s1"}), _issue({"step_id": "s3"}), _issue(None), _issue({})]
    action = _act(
        A.MODIFY,
        target_step_id="s3",
        new_step=_step("s3", "consistent draft"),
        inconsistency_detected=True,
        semantic_validation_input=issues,
    )
    out = _apply_one(plan, action)
    assert out.applied and out.contradicts == ["s1"]
    assert [_enc(s) for s in plan.steps[:2]] == executed_before
    assert plan.step("s3").description == "consistent draft"


def test_malformed_actions_are_rejected_not_raised():
    plan = _plan()
    before = _enc(plan)
    bad = [
        _act(A.MODIFY, new_step=_step("s3")),
        _act(A.REPLACE, target_step_id="s3"),
        _act(A.REMOVE, target_step_id="nope"),
        _act(A.SUBPLAN_CREATE, target_step_id="s3"),
        _act(A.SUBPLAN_CREATE, target_step_id="s4", subplan=_subplan("s3", [_step("a")])),
        _act(A.ADD, new_step=_step("")),
        RefinementAction(action_type=A.STEP_MARK_INVALID, target_step_id="s3", justification=" "),
    ]
    outcomes = apply_actions(plan, bad)
    assert all(not o.applied and o.advisory and o.reason for o in outcomes)
    assert _enc(plan) == before


def test_the_plan_never_shares_step_objects_with_the_action():
    plan = _plan()
    action = _act(A.ADD, new_step=_step("s5", args={"q": ["x"]}))
    _apply_one(plan, action)
    plan.step("s5").args["q"].append("y")
    assert action.new_step is not None and action.new_step.args == {"q": ["x"]}


def test_replay_rebuilds_the_final_plan_from_the_applied_outcomes():
    plan = _plan()
    original = copy.deepcopy(plan)
    outcomes = apply_actions(plan, [*_MIXED, _ON_TARGET[A.REMOVE]("s1")])
    assert [o.applied for o in outcomes] == [True] * len(_MIXED) + [False]
    assert _enc(replay(original, outcomes)) == _enc(plan)
    assert _enc(replay(original, [o.action for o in outcomes])) == _enc(plan)
    assert _enc(original) == _enc(_plan())


def test_replay_on_the_wrong_original_raises_integrity_error():
    plan = _plan()
    outcomes = apply_actions(plan, [_act(A.ADD, new_step=_step("s5"))])
    with pytest.raises(PlanIntegrityError):
        replay(plan, outcomes)


# Property: any plan, any action sequence, including actions aimed at executed steps or nonsense targets.
# Ids beyond the plan's own: fresh ones for ADD, subplan-style ones, and the empty id.
_EXTRA = ["n1", "n2", "s3.1", "s3.2", ""]
_ref = st.sampled_from(["s1", "s2", "s3", "s4", *_EXTRA])
_new_steps = st.builds(
    _step,
    _ref,
    st.sampled_from(["a", "b"]),
    status=st.sampled_from(list(StepStatus)),
    dependencies=st.lists(_ref, max_size=3),
    provides=st.lists(st.sampled_from(["x", "y"]), max_size=2),
    errors=st.lists(st.just("e"), max_size=1),
)


def _mostly(strategy: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    """Present three times in four, so most actions are well formed and the interesting paths get exercised."""
    return st.tuples(st.sampled_from([True, True, True, False]), strategy).map(lambda t: t[1] if t[0] else None)


@st.composite
def _actions(draw: st.DrawFn, ids: list[str]) -> RefinementAction:
    ref = st.sampled_from([*ids, *ids, *_EXTRA])  # mostly the plan's own steps, executed ones included
    target = draw(_mostly(ref))
    parent = target if target is not None and draw(_mostly(st.just(True))) else draw(ref)
    subplan = Subplan(
        parent_step_id=parent,
        subplan_goal=draw(st.sampled_from(["goal", "goal", "goal", ""])),
        substeps=draw(st.lists(_new_steps, max_size=3)),
        depth_level=draw(st.integers(0, MAX_DEPTH + 2)),
        created_by="refinement",
    )
    return RefinementAction(
        action_type=draw(st.sampled_from(list(A))),
        justification=draw(st.sampled_from(["why"] * 7 + [""])),
        target_step_id=target,
        new_step=draw(_mostly(_new_steps)),
        semantic_validation_input=draw(st.lists(ref.map(lambda sid: _issue({"step_id": sid})), max_size=3)),
        inconsistency_detected=draw(st.booleans()),
        position_after=draw(_mostly(ref)),
        subplan=draw(_mostly(st.just(subplan))),
    )


@st.composite
def _plans(draw: st.DrawFn) -> Plan:
    n = draw(st.integers(2, 6))
    statuses = st.sampled_from([StepStatus.PENDING, StepStatus.COMPLETE, StepStatus.FAILED, StepStatus.INVALID])
    steps = []
    for i in range(1, n + 1):
        earlier = [f"s{j}" for j in range(1, i)]
        deps = draw(st.lists(st.sampled_from(earlier), unique=True)) if earlier else []
        steps.append(PlanStep(step_id=f"s{i}", description=f"d{i}", status=draw(statuses), dependencies=deps))
    return Plan(goal="g", steps=steps)


@settings(max_examples=300)
@given(data=st.data())
def test_any_action_sequence_keeps_executed_steps_and_replays_exactly(data: st.DataObject):
    plan = data.draw(_plans())
    actions = data.draw(st.lists(_actions(_ids(plan)), max_size=8))
    original = copy.deepcopy(plan)
    executed = {s.step_id: (s, _enc_result(s)) for s in plan.steps if s.executed}
    outcomes = []
    for action in actions:
        before = _enc(plan)
        outcome = _apply_one(plan, action)
        outcomes.append(outcome)
        if not outcome.applied:
            assert outcome.advisory and outcome.reason
            assert _enc(plan) == before
        _assert_indices(plan)
        ids = _ids(plan)
        assert len(ids) == len(set(ids))
    for step_id, (obj, encoded) in executed.items():
        assert plan.step(step_id) is obj
        assert _enc_result(obj) == encoded
    assert [i for i in _ids(plan) if i in executed] == [i for i in _ids(original) if i in executed]
    assert _enc(replay(original, outcomes)) == _enc(plan)
