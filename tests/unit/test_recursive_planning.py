"""Recursive planning and adaptive depth (02 US2/US4): subplans, depth cap, immutable executed steps, TTL by profile."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import msgspec

from aeon.application.result import RunStatus
from aeon.entrypoints.inspect import analyse, render_inspection

from harness import document, run
from multipass import SUM_PLAN, profile, refine, verdict
from responder import prompt_of, run_with

PLAN_WITH_VAGUE_STEP = {
    "goal": "add 5 and 10 and explain",
    "steps": [
        {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expression": "5 + 10"}},
        {"step_id": "s2", "description": "Explain everything about the result", "agent": "llm"},
    ],
}


def blocked(_: Any, __: int) -> dict[str, str]:
    return {"answer": "Too vague to do.", "clarity_state": "BLOCKED", "handoff_to_next": ""}


def test_a_step_that_needs_decomposition_gets_a_subplan_and_the_run_finishes(tmp_path):
    def step_result(messages: Any, nth: int) -> dict[str, str]:
        if "Step: Explain everything about the result" in prompt_of(messages):
            return blocked(messages, nth)
        return {"answer": "15 is odd.", "clarity_state": "CLEAR", "handoff_to_next": "odd"}

    subplan = {
        "actions": [
            {
                "action_type": "SUBPLAN_CREATE",
                "target_step_id": "s2",
                "justification": "s2 is too broad",
                "new_step": {"step_id": "s2", "description": "Explain the result in two parts"},
                "substeps": [
                    {
                        "step_id": "a",
                        "description": "Check whether 15 is odd",
                        "tool": "calculator",
                        "args": {"expression": "15 % 2"},
                    },
                    {"step_id": "b", "description": "Say whether 15 is odd", "agent": "llm"},
                ],
            }
        ]
    }
    answers = {
        "task_profile": lambda m, n: json.loads(profile(3)),
        "plan": lambda m, n: PLAN_WITH_VAGUE_STEP,
        "step_result": step_result,
        "validation": lambda m, n: {"issues": []},
        "convergence": lambda m, n: json.loads(verdict(n >= 1)),
        "refinement": lambda m, n: subplan,
    }
    result, _ = run_with(tmp_path, answers, "add 5 and 10 and explain whether it is odd", ttl=4)
    assert result.status is RunStatus.COMPLETED and result.converged is True and result.passes == 2
    steps = {s["step_id"]: s for s in document(result)["plan"]["steps"]}
    assert list(steps) == ["s1", "s2.1", "s2.2"]  # the subplan runs in place of its parent
    assert steps["s2.1"]["step_output"] == 1 and steps["s2.2"]["step_output"] == "15 is odd."
    assert steps["s2.2"]["dependencies"] == ["s2.1"]
    first = result.history.passes[0]
    assert [c.action.action_type for c in first.refinement_changes] == ["SUBPLAN_CREATE"]
    assert first.refinement_changes[0].action.subplan.depth_level == 1
    # the blocked step asked a follow-up question, and the decomposition triggered a profile revision
    assert any(a.kind == "follow_up_question" and a.step_id == "s2" for a in result.advisories)
    assert len(result.history.profiles) == 2
    assert result.history.passes[1].phases[0].phase == "A"


def test_nesting_past_depth_five_is_flagged_for_manual_intervention_and_the_run_finishes(tmp_path):
    def deeper(messages: Any, nth: int) -> dict[str, Any]:
        target = re.findall(r"(s1[.\d]*) \[invalid\]", prompt_of(messages))[-1]
        return {
            "actions": [
                {
                    "action_type": "SUBPLAN_CREATE",
                    "target_step_id": target,
                    "justification": "deeper",
                    "new_step": {"step_id": target, "description": "split"},
                    "substeps": [{"step_id": "x", "description": "Think harder", "agent": "llm"}],
                }
            ]
        }

    answers = {
        "task_profile": lambda m, n: json.loads(profile(5, sufficiency=0.0, breadth="broad", confidence="high")),
        "plan": lambda m, n: {"goal": "g", "steps": [{"step_id": "s1", "description": "Think", "agent": "llm"}]},
        "step_result": blocked,
        "validation": lambda m, n: {"issues": []},
        "convergence": lambda m, n: json.loads(verdict(False)),
        "refinement": deeper,
    }
    result, _ = run_with(tmp_path, answers, "reason about it", ttl=9, max_llm_calls=200)
    assert result.status is RunStatus.TTL_EXPIRED  # finishes with a structured, non-converged result
    manual = [a for a in result.advisories if a.kind == "manual_intervention"]
    assert len(manual) == 1 and "exceeds maximum 5" in manual[0].reason
    deepest = manual[0].step_id
    assert deepest == "s1" + ".1" * 5  # depth 5 exists; its own decomposition (depth 6) was refused
    doc = document(result)  # what `aeon run --json` prints
    assert doc["advisories"] and any(a["kind"] == "manual_intervention" for a in doc["advisories"])
    step = next(s for s in doc["plan"]["steps"] if s["step_id"] == deepest)
    assert any("manual intervention" in e for e in step["errors"])
    report = analyse(json.loads(msgspec.json.encode(result.history)))
    assert report["patterns"]["manual_intervention"][0]["target"] == deepest
    out = io.StringIO()
    render_inspection(report, out)
    assert f"manual intervention needed: {deepest}" in out.getvalue()


def test_a_refinement_targeting_a_completed_step_is_rejected_and_the_output_is_unchanged(tmp_path):
    hijack = refine(
        {
            "action_type": "MODIFY",
            "target_step_id": "s1",
            "justification": "redo it",
            "new_step": {
                "step_id": "s1",
                "description": "Add 1 and 1",
                "tool": "calculator",
                "args": {"expression": "1 + 1"},
            },
        }
    )
    r = run(
        tmp_path,
        [profile(3), SUM_PLAN, verdict(False), hijack, verdict(True)],
        evaluate=True,
        ttl=3,
    )
    res = r.result
    first, second = res.history.passes
    (change,) = first.refinement_changes
    assert change.applied is False and change.advisory is True and "executed step s1" in change.reason
    assert [a.kind for a in res.advisories if a.kind == "refinement_rejected"] == ["refinement_rejected"]
    assert any(x["event"] == "refinement" and not x["applied"] for x in r.records())
    for p in (first, second):
        s1 = next(s for s in (p.final_plan_state or p.plan_state).steps if s.step_id == "s1")
        assert s1.step_output == 15 and s1.args == {"expression": "5 + 10"}


def test_a_simple_request_gets_less_ttl_than_an_ambiguous_complex_one_within_the_cap(tmp_path):
    simple = run(
        tmp_path / "a",
        [profile(1, sufficiency=1.0, breadth="narrow", confidence="low"), SUM_PLAN, verdict(True)],
        evaluate=True,
        ttl=4,
    )
    hard = run(
        tmp_path / "b",
        [profile(5, sufficiency=0.1, breadth="broad", confidence="high"), SUM_PLAN, verdict(True)],
        evaluate=True,
        ttl=4,
    )
    a = simple.result.history.passes[0].adaptive_depth
    b = hard.result.history.passes[0].adaptive_depth
    assert a.allocated_ttl < b.allocated_ttl <= 4
    assert a.reasoning_mode == "shallow" and b.reasoning_mode == "deep"
    assert "capped by run.ttl" in b.adjustment_reason
    out = io.StringIO()
    render_inspection(analyse(json.loads(msgspec.json.encode(hard.result.history))), out)
    assert "very_high" in out.getvalue() and "capped by run.ttl" in out.getvalue()
    assert "reasoning_depth+5" in out.getvalue()  # the heuristics behind it


def test_profile_revision_is_versioned_and_clamped_to_one_tier(tmp_path):
    answers = {
        "task_profile": lambda m, n: json.loads(profile(1 if n == 0 else 5)),
        "plan": lambda m, n: PLAN_WITH_VAGUE_STEP,
        "step_result": blocked,
        "validation": lambda m, n: {
            "issues": [
                {
                    "type": "specificity",
                    "severity": "HIGH",
                    "step_id": "s2",
                    "description": "too vague",
                    "repair": "say what to explain",
                }
            ]
        },
        "convergence": lambda m, n: json.loads(verdict(n >= 1)),
        "refinement": lambda m, n: {"actions": []},
    }
    result, log = run_with(tmp_path, answers, "explain it", ttl=3)
    versions = [p.profile_version for p in result.history.profiles]
    depths = [p.reasoning_depth for p in result.history.profiles]
    # s2 stays blocked, so each pass re-profiles (at most twice); every jump to 5 is clamped to one tier up
    assert versions == [1, 2, 3] and depths == [1, 2, 3]
    assert any(a.kind == "profile_clamped" for a in result.advisories)
    assert "profile_clamped" in log.read_text()
    second = result.history.passes[1].adaptive_depth
    assert "profile v2 after" in second.adjustment_reason or result.history.passes[1].phases[0].phase == "A"
    assert any(a.kind == "follow_up_question" and a.step_id == "s2" for a in result.advisories)
