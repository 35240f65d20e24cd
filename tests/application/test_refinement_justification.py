"""A refinement action without a justification is rejected: it changes nothing and is kept as an advisory.

Three layers say so today: domain/refinement.py apply_actions (the rule), the refinement gate (which records the
rejection as a `refinement_rejected` advisory) and the refiner's validation of the model's answer (which sends a
blank justification to the supervisor's LLM repair; unrepaired, the refinement fails as a `refinement_failed`
advisory and the run goes on with the plan it had).
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec
import pytest

from aeon.application.judges.refinement_gate import RefinementGate
from aeon.application.judges.refiner import Refiner
from aeon.domain.advisories import RefinementFailed, RefinementRejected
from aeon.domain.plan import Plan, PlanStep, StepStatus
from aeon.domain.refinement import RefinementAction, RefinementActionType, Subplan, apply_actions
from aeon.domain.run_state import RefinementLedger

from harness import run, tool_specs
from multipass import SUM_PLAN, add_step, first, profile, refine, verdict

A = RefinementActionType
BLANKS = ["", " ", "\n\t  "]


def plan() -> Plan:
    return Plan(
        goal="calculate the sum of 5 and 10",
        steps=[
            PlanStep(step_id="s1", description="Add 5 and 10", status=StepStatus.COMPLETE, step_output=15),
            PlanStep(step_id="s2", description="State the sum", agent="llm", dependencies=["s1"]),
        ],
    )


def action(kind: A, justification: str) -> RefinementAction:
    """An action of `kind` that would apply to plan() — but for its justification."""
    new = PlanStep(step_id="s3" if kind is A.ADD else "s2", description="Say the sum in words", agent="llm")
    fields: dict[str, Any] = {
        A.ADD: {"new_step": new},
        A.MODIFY: {"target_step_id": "s2", "new_step": new},
        A.REPLACE: {"target_step_id": "s2", "new_step": new},
        A.REMOVE: {"target_step_id": "s2"},
        A.STEP_MARK_INVALID: {"target_step_id": "s2"},
        A.SUBPLAN_CREATE: {
            "target_step_id": "s2",
            "subplan": Subplan(
                parent_step_id="s2",
                subplan_goal="state it",
                substeps=[PlanStep(step_id="a", description="read s1"), PlanStep(step_id="b", description="say it")],
                depth_level=1,
                created_by="refinement",
            ),
        },
    }[kind]
    return RefinementAction(action_type=kind, justification=justification, **fields)


@pytest.mark.parametrize("blank", BLANKS, ids=["empty", "space", "whitespace"])
def test_an_add_without_a_justification_changes_nothing_and_is_an_advisory_saying_why(blank: str):
    p = plan()
    before, steps = msgspec.json.encode(p), list(p.steps)
    (outcome,) = apply_actions(p, [action(A.ADD, blank)])
    assert outcome.applied is False and outcome.advisory is True
    assert outcome.reason == "justification is empty"
    assert outcome.manual_intervention is False
    assert msgspec.json.encode(p) == before
    assert all(a is b for a, b in zip(p.steps, steps, strict=True))


@pytest.mark.parametrize("kind", list(A), ids=[k.value for k in A])
def test_no_action_type_applies_without_a_justification(kind: A):
    justified, blank = plan(), plan()
    assert apply_actions(justified, [action(kind, "the sum must be stated")])[0].applied  # the action itself is fine
    (outcome,) = apply_actions(blank, [action(kind, " ")])
    assert (outcome.applied, outcome.advisory, outcome.reason) == (False, True, "justification is empty")
    assert msgspec.json.encode(blank) == msgspec.json.encode(plan())


def test_a_rejected_action_does_not_stop_the_justified_ones_after_it():
    p = plan()
    second = copy.deepcopy(action(A.ADD, "the sum must be said in words"))
    assert second.new_step is not None
    second.new_step.step_id = "s4"
    outcomes = apply_actions(p, [action(A.ADD, ""), second])
    assert [o.applied for o in outcomes] == [False, True]
    assert [s.step_id for s in p.steps] == ["s1", "s2", "s4"]


def test_the_refinement_gate_records_the_rejection_as_a_refinement_rejected_advisory():
    p = plan()
    gate = RefinementGate({t.name: t for t in tool_specs()}, RefinementLedger())
    accepted = gate.accept(p, [action(A.ADD, "  ")], None, pass_number=1)
    [outcome] = accepted.outcomes
    assert (outcome.applied, outcome.advisory, outcome.reason) == (False, True, "justification is empty")
    assert accepted.advisories == [RefinementRejected(pass_number=1, step_id="s3", reason="justification is empty")]
    assert [s.step_id for s in p.steps] == ["s1", "s2"]


@pytest.mark.parametrize("blank", [*BLANKS, None], ids=["empty", "space", "whitespace", "missing"])
def test_the_refiner_flags_a_proposed_action_without_a_justification(blank: str | None):
    proposed: dict[str, Any] = add_step("s2", "State the sum from s1", agent="llm")
    if blank is None:
        del proposed["justification"]
    else:
        proposed["justification"] = blank
    refiner = Refiner(supervisor=None, tools=tool_specs(), budget=None)  # type: ignore[arg-type]  # problems() needs no LLM
    assert refiner.problems({"actions": [proposed]}) == ["action 1: 'justification' is a required property"]
    assert refiner.problems({"actions": [add_step("s2", "State the sum from s1", agent="llm")]}) == []


BLANK_ADD = refine({**add_step("s2", "State the sum from s1", agent="llm"), "justification": " "})


def test_in_a_run_an_unjustified_refinement_is_rejected_recorded_as_advisory_and_the_plan_kept(tmp_path):
    # pass 1 fails convergence; the refiner answers without a justification, and so do both LLM repairs
    script = [first(profile(3), SUM_PLAN), verdict(False), BLANK_ADD, BLANK_ADD, BLANK_ADD]
    r = run(tmp_path, [*script, verdict(True)], evaluate=True, ttl=3)
    res = r.result
    assert res.status == "completed" and res.passes == 2 and r.llm.remaining == 0
    [advisory] = res.advisories
    assert isinstance(advisory, RefinementFailed) and advisory.pass_number == 1
    assert "'justification' is a required property" in advisory.detail
    assert [p.refinement_changes for p in res.history.passes] == [[], []]
    assert res.plan is not None and [s.step_id for s in res.plan.steps] == ["s1"]  # the ADD never reached the plan
    assert res.counts.llm_repairs == 2
    repair_prompts = [q.messages[-1].content for q in r.llm.requests[3:5]]
    assert all("'justification' is a required property" in p for p in repair_prompts)  # the repair is told why
    recs = r.records()
    assert [x["detail"] for x in recs if x["event"] == "refinement_failed"] == [advisory.detail]
    assert not [x for x in recs if x["event"] == "refinement"]


def test_in_a_run_a_justification_supplied_by_the_repair_lets_the_refinement_apply(tmp_path):
    script = [
        first(profile(3), SUM_PLAN),
        verdict(False),
        BLANK_ADD,
        refine(add_step("s2", "State it", agent="llm")),
    ]
    r = run(tmp_path, [*script, "The sum is 15.", verdict(True)], evaluate=True, ttl=3)
    res = r.result
    assert res.status == "completed" and res.advisories == []
    [change] = res.history.passes[0].refinement_changes
    assert change.applied is True and change.action.justification == "the answer must be stated"
    assert res.plan is not None and [s.step_id for s in res.plan.steps] == ["s1", "s2"]
