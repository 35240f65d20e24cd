"""Step ids the model writes obey the same rule as hand-written ones: printable, no bidi or zero-width characters."""

from __future__ import annotations

from pathlib import Path

import pytest

from aeon.domain.plan import Plan, PlanStep, StepStatus, step_id_problem
from aeon.domain.refinement import RefinementAction, RefinementActionType, Subplan, apply_actions

from harness import SUM_STEP, plan_json, run

HIDDEN = ["s1\u202e", "s\u200d1", "s1\u2069", "s\ufeff1", "s1\x1b[2J", "s 1\u00a0", "s\u061c1"]


@pytest.mark.parametrize("step_id", HIDDEN)
def test_ids_with_control_bidi_or_zero_width_characters_have_a_problem_naming_the_code_point(step_id: str) -> None:
    problem = step_id_problem(step_id)
    assert problem is not None
    hidden = next(ch for ch in step_id if not ch.isprintable())
    assert f"U+{ord(hidden):04X}" in problem
    assert step_id not in problem  # the message shows the id escaped


@pytest.mark.parametrize("step_id", ["s1", "step-2.a", "étape 3", "步骤4", "s1 → s2"])
def test_printable_ids_in_any_script_have_no_problem(step_id: str) -> None:
    assert step_id_problem(step_id) is None


def test_a_model_plan_with_a_bidi_id_is_sent_back_for_repair_and_never_runs(tmp_path: Path) -> None:
    bad = plan_json({**SUM_STEP, "step_id": "s1\u202e"})
    r = run(tmp_path, [bad, plan_json(SUM_STEP)])

    assert r.result.status == "completed"
    assert list(r.doc["outputs"]) == ["s1"]
    repair = r.llm.requests[1].messages[-1].content
    assert "U+202E (a bidi control)" in repair
    executed = [rec for rec in r.records() if rec["event"] == "cycle" and rec.get("step_id")]
    assert {rec["step_id"] for rec in executed} == {"s1"}


def _pending() -> Plan:
    return Plan(goal="g", steps=[PlanStep(step_id="s1", description="a"), PlanStep(step_id="s2", description="b")])


def test_a_refinement_cannot_add_a_step_with_a_hidden_character_in_its_id() -> None:
    plan = _pending()
    add = RefinementAction(
        action_type=RefinementActionType.ADD,
        justification="one more",
        new_step=PlanStep(step_id="s\u200b3", description="c", agent="llm"),
    )
    (outcome,) = apply_actions(plan, [add])
    assert not outcome.applied and "U+200B (a zero-width character)" in outcome.reason
    assert [s.step_id for s in plan.steps] == ["s1", "s2"]


def test_a_subplan_cannot_bring_in_a_substep_id_with_a_bidi_override() -> None:
    plan = _pending()
    sub = Subplan(
        parent_step_id="s2",
        subplan_goal="split it",
        substeps=[PlanStep(step_id="s2.\u202e1", description="x"), PlanStep(step_id="s2.2", description="y")],
        depth_level=1,
        created_by="planner",
    )
    action = RefinementAction(action_type=RefinementActionType.SUBPLAN_CREATE, justification="split", subplan=sub)
    (outcome,) = apply_actions(plan, [action])
    assert not outcome.applied and "U+202E" in outcome.reason
    assert [s.step_id for s in plan.steps] == ["s1", "s2"]
    assert all(s.status is StepStatus.PENDING for s in plan.steps)
    assert "\u202e" not in outcome.reason  # shown escaped: safe to print and log
