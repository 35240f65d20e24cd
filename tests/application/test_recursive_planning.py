"""Recursive planning and adaptive depth (02 US2/US4): subplans, depth cap, immutable executed steps, TTL by profile.

Acceptance tests for 02 US2, recursive planning and plan refinement.

Two levels: the refinement gate's `accept` (limits, depth, validation before acceptance, repair conflicts, follow-up
questions, frozen fragments) and whole runs against a fake model answering by schema name (responder.py).
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import msgspec
import pytest

from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.judges.refinement_gate import (
    GLOBAL_LIMIT,
    PER_FRAGMENT_LIMIT,
    RefinementGate,
    follow_up_questions,
)
from aeon.application.results import RunStatus
from aeon.application.views.inspection import analyse
from aeon.application.views.inspection_text import inspection_text
from aeon.domain.evaluation import ArtifactType, IssueType, SemanticValidationReport, Severity, ValidationIssue
from aeon.domain.history import ExecutionHistory
from aeon.domain.plan import ClarityState, Plan, PlanStep, StepStatus
from aeon.domain.refinement import MAX_DEPTH, RefinementAction, RefinementActionType, Subplan
from aeon.domain.run_state import RefinementLedger

from harness import document, run
from multipass import SUM_PLAN, first, profile, refine, verdict
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
    out.write(inspection_text(report))
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
        [first(profile(3), SUM_PLAN), verdict(False), hijack, verdict(True)],
        evaluate=True,
        ttl=3,
    )
    res = r.result
    one, two = res.history.passes
    (change,) = one.refinement_changes
    assert change.applied is False and change.advisory is True and "executed step s1" in change.reason
    assert [a.kind for a in res.advisories if a.kind == "refinement_rejected"] == ["refinement_rejected"]
    assert any(x["event"] == "refinement" and not x["applied"] for x in r.records())
    for p in (one, two):
        s1 = next(s for s in (p.final_plan_state or p.plan_state).steps if s.step_id == "s1")
        assert s1.step_output == 15 and s1.args == {"expression": "5 + 10"}


def test_a_simple_request_gets_less_ttl_than_an_ambiguous_complex_one_within_the_cap(tmp_path):
    simple = run(
        tmp_path / "a",
        [first(profile(1, sufficiency=1.0, breadth="narrow", confidence="low"), SUM_PLAN), verdict(True)],
        evaluate=True,
        ttl=4,
    )
    hard = run(
        tmp_path / "b",
        [first(profile(5, sufficiency=0.1, breadth="broad", confidence="high"), SUM_PLAN), verdict(True)],
        evaluate=True,
        ttl=4,
    )
    a = simple.result.history.passes[0].adaptive_depth
    b = hard.result.history.passes[0].adaptive_depth
    assert a.allocated_ttl < b.allocated_ttl <= 4
    assert a.reasoning_mode == "shallow" and b.reasoning_mode == "deep"
    assert "capped by run.ttl" in b.adjustment_reason
    out = io.StringIO()
    out.write(inspection_text(analyse(json.loads(msgspec.json.encode(hard.result.history)))))
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


# -- Acceptance tests for 02 US2, recursive planning and plan refinement -----------------------------------------------


A = RefinementActionType


# -- helpers ------------------------------------------------------------------------------------------------------ --
def _tools() -> dict[str, Any]:
    registry = ToolRegistry()
    register_builtins(registry)
    return {t.name: t for t in registry.list()}


def _planner() -> RefinementGate:
    return RefinementGate(_tools(), RefinementLedger())


def _step(step_id: str, description: str = "do it", **kw: Any) -> PlanStep:
    if "tool" not in kw:
        kw.setdefault("agent", "llm")
    return PlanStep(step_id=step_id, description=description, **kw)


def _act(action_type: A, **kw: Any) -> RefinementAction:
    return RefinementAction(action_type=action_type, justification="the evaluation found a gap", **kw)


def _modify(target: str, description: str, **kw: Any) -> RefinementAction:
    return _act(A.MODIFY, target_step_id=target, new_step=_step(target, description, **kw))


def _subplan_action(parent: str, *substeps: PlanStep) -> RefinementAction:
    sub = Subplan(
        parent_step_id=parent,
        subplan_goal=f"decompose {parent}",
        substeps=list(substeps),
        depth_level=1,
        created_by="recursive_planner",
    )
    return _act(A.SUBPLAN_CREATE, target_step_id=parent, subplan=sub)


def _four_step_plan() -> Plan:
    """s1 has run; s2..s4 are pending and chained by dependencies and provides."""
    return Plan(
        goal="add 5 and 10, check parity, explain",
        steps=[
            PlanStep(
                step_id="s1",
                description="Add 5 and 10",
                tool="calculator",
                args={"expression": "5 + 10"},
                status=StepStatus.COMPLETE,
                step_output=15,
                provides=["sum"],
            ),
            _step("s2", "Check parity", tool="calculator", args={"expression": "15 % 2"}, dependencies=["s1"]),
            _step("s3", "Explain the parity", dependencies=["s2"], provides=["explanation"]),
            _step("s4", "State the answer", dependencies=["s3"]),
        ],
    )


def _report(*issues: ValidationIssue) -> SemanticValidationReport:
    return SemanticValidationReport.build("v-1", ArtifactType.CROSS_PHASE, list(issues))


def _issue(step_id: str, kind: IssueType = IssueType.SPECIFICITY, *, repair: bool = True, **kw: Any) -> ValidationIssue:
    return ValidationIssue(
        issue_id=kw.pop("issue_id", "V1"),
        type=kind,
        severity=kw.pop("severity", Severity.MEDIUM),
        description=kw.pop("description", "too vague"),
        location={"step_id": step_id, "artifact_reference": "cross_phase"},
        proposed_repair={"action": "rewrite_step", "target": step_id, "changes": {"suggestion": "be concrete"}}
        if repair
        else None,
    )


def _snapshot(plan: Plan) -> bytes:
    return msgspec.json.encode(plan)


def _by_id(plan: Any) -> dict[str, dict[str, Any]]:
    plan_dict = plan if isinstance(plan, dict) else msgspec.to_builtins(plan)
    return {s["step_id"]: s for s in plan_dict["steps"]}


def _kinds(advisories: list[Any], kind: str) -> list[dict[str, Any]]:
    """The advisories of one kind, as the history records them."""
    return [msgspec.to_builtins(a) for a in advisories if a.kind == kind]


def _clear(_: Any, __: int) -> dict[str, str]:
    return {"answer": "Done.", "clarity_state": "CLEAR", "handoff_to_next": "done"}


def _blocked(_: Any, __: int) -> dict[str, str]:
    return {"answer": "Too vague to do.", "clarity_state": "BLOCKED", "handoff_to_next": ""}


def _answers(plan: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    answers: dict[str, Any] = {
        "task_profile": lambda m, n: json.loads(profile(3)),
        "plan": lambda m, n: plan,
        "step_result": _clear,
        "validation": lambda m, n: {"issues": []},
        "convergence": lambda m, n: json.loads(verdict(True)),
        "refinement": lambda m, n: {"actions": []},
    }
    answers.update(overrides)
    return answers


SUM_THEN_EXPLAIN = {
    "goal": "add 5 and 10 and explain the result",
    "steps": [
        {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expression": "5 + 10"}},
        {"step_id": "s2", "description": "Explain everything about it", "agent": "llm", "dependencies": ["s1"]},
    ],
}


def _modify_answer(target: str, description: str, **step: Any) -> dict[str, Any]:
    return {
        "actions": [
            {
                "action_type": "MODIFY",
                "target_step_id": target,
                "new_step": {"step_id": target, "description": description, "agent": "llm", **step},
                "substeps": [],
                "justification": "make it concrete",
            }
        ]
    }


def _blocked_on_first_try(step_text: str) -> Any:
    """step_result: the step whose description is `step_text` is BLOCKED the first time it runs, CLEAR after."""
    seen: list[int] = []

    def answer(messages: Any, nth: int) -> dict[str, str]:
        if f"Step: {step_text}" in prompt_of(messages) and not seen:
            seen.append(nth)
            return _blocked(messages, nth)
        return _clear(messages, nth)

    return answer


# == Scenario 3: partial rewrites keep the rest of the plan and its relations ==========================================
def test_a_partial_rewrite_changes_only_the_refined_fragment():
    plan, planner = _four_step_plan(), _planner()
    before = {s.step_id: msgspec.json.encode(s) for s in plan.steps}
    action = _modify("s3", "Explain why 15 is odd in one sentence", dependencies=["s2"], provides=["explanation"])
    acc = planner.accept(plan, [action], None, pass_number=1)
    assert [o.applied for o in acc.outcomes] == [True]
    assert [s.step_id for s in plan.steps] == ["s1", "s2", "s3", "s4"]  # ids and order kept
    for sid in ("s1", "s2", "s4"):  # untouched fragments are byte-identical
        assert msgspec.json.encode(plan.step(sid)) == before[sid]
    s3 = plan.step("s3")
    assert s3.description == "Explain why 15 is odd in one sentence"
    assert (s3.dependencies, s3.provides, s3.status) == (["s2"], ["explanation"], StepStatus.PENDING)
    assert plan.step("s4").dependencies == ["s3"]


@pytest.mark.parametrize("repeat_dependencies", [False, True], ids=["omitted", "repeated"])
def test_a_refinement_proposed_by_the_model_keeps_the_step_dependencies(tmp_path, repeat_dependencies):
    extra = {"dependencies": ["s1"]} if repeat_dependencies else {}
    answers = _answers(
        SUM_THEN_EXPLAIN,
        step_result=_blocked_on_first_try("Explain everything about it"),
        convergence=lambda m, n: json.loads(verdict(n >= 1)),
        refinement=lambda m, n: _modify_answer("s2", "Explain that 15 is odd", **extra),
    )
    result, _ = run_with(tmp_path, answers, "add 5 and 10 and explain the result", ttl=3)
    assert result.status is RunStatus.COMPLETED and result.passes == 2
    s2 = _by_id(result.plan)["s2"]
    assert s2["description"] == "Explain that 15 is odd"  # the rewrite happened …
    assert s2["dependencies"] == ["s1"]  # … and the relationship to s1 survived it


# == Scenario 2: subplans replace a complex step in place ==============================================================
def test_a_subplan_expands_a_middle_step_in_place_and_dependants_follow_the_last_substep():
    plan, planner = _four_step_plan(), _planner()
    action = _subplan_action(
        "s3",
        _step("a", "Say whether 15 is odd"),
        _step("b", "Give the reason", dependencies=["a"]),
    )
    acc = planner.accept(plan, [action], None, pass_number=1)
    (outcome,) = acc.outcomes
    assert outcome.applied and outcome.action.subplan is not None and outcome.action.subplan.depth_level == 1
    assert [s.step_id for s in plan.steps] == ["s1", "s2", "s3.1", "s3.2", "s4"]
    assert plan.step("s3.1").dependencies == ["s2"]  # inherits the parent's dependencies
    assert plan.step("s3.2").dependencies == ["s3.1"]
    assert plan.step("s3.2").provides == ["explanation"]  # and the last one what the parent provided
    assert plan.step("s4").dependencies == ["s3.2"]
    assert [(s.step_index, s.total_steps) for s in plan.steps] == [(i, 5) for i in range(1, 6)]
    assert planner.ledger.depth["s3.1"] == planner.ledger.depth["s3.2"] == 1


def test_a_subplan_for_a_blocked_step_lets_its_dependant_run_once_the_substeps_complete(tmp_path):
    plan = {
        "goal": "add 5 and 10, explain, summarise",
        "steps": [
            {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expression": "5 + 10"}},
            {"step_id": "s2", "description": "Explain everything", "agent": "llm"},
            {"step_id": "s3", "description": "Summarise the explanation", "agent": "llm", "dependencies": ["s2"]},
        ],
    }
    decompose = {
        "actions": [
            {
                "action_type": "SUBPLAN_CREATE",
                "target_step_id": "s2",
                "new_step": {"step_id": "s2", "description": "Explain in two parts"},
                "substeps": [
                    {"step_id": "a", "description": "Say whether 15 is odd", "agent": "llm"},
                    {"step_id": "b", "description": "Say whether 15 is prime", "agent": "llm"},
                ],
                "justification": "s2 is too broad",
            }
        ]
    }
    answers = _answers(
        plan,
        step_result=lambda m, n: _blocked(m, n) if "Step: Explain everything" in prompt_of(m) else _clear(m, n),
        refinement=lambda m, n: decompose if n == 0 else {"actions": []},
    )
    result, _ = run_with(tmp_path, answers, "add 5 and 10, explain, summarise", ttl=4)
    steps = _by_id(result.plan)
    assert list(steps) == ["s1", "s2.1", "s2.2", "s3"]
    assert steps["s2.2"]["status"] == "complete" and steps["s3"]["dependencies"] == ["s2.2"]
    assert steps["s3"]["status"] == "complete"
    assert result.converged is True


# == Scenario 1: low-specificity fragments get follow-up questions =====================================================
def test_follow_up_questions_cover_vague_and_unclear_fragments_once_each():
    plan = _four_step_plan()
    plan.step("s3").clarity_state = ClarityState.PARTIALLY_CLEAR
    plan.step("s4").clarity_state = ClarityState.BLOCKED
    plan.step("s4").status = StepStatus.INVALID
    report = _report(
        _issue("s2", issue_id="V1", description="which parity?"),
        _issue("s2", issue_id="V2", description="also vague"),
        _issue("s1", IssueType.HALLUCINATION, issue_id="V3", severity=Severity.HIGH),  # not a specificity issue
    )
    questions = follow_up_questions(plan, report, pass_number=2)
    assert [q.step_id for q in questions] == ["s2", "s3", "s4"]  # one per fragment, in a stable order
    assert all(q.kind == "follow_up_question" and q.pass_number == 2 for q in questions)
    assert "which parity?" in questions[0].question and questions[0].question.endswith("?")
    assert "PARTIALLY_CLEAR" in questions[1].question and "BLOCKED" in questions[2].question


def test_a_vague_fragment_gets_a_follow_up_question_in_the_history_and_triggers_refinement(tmp_path):
    issue = {
        "type": "specificity",
        "severity": "HIGH",
        "step_id": "s2",
        "description": "it does not say what to explain",
        "repair": "name the property to explain",
    }
    refine_prompts: list[str] = []

    def refinement(messages: Any, nth: int) -> dict[str, Any]:
        refine_prompts.append(prompt_of(messages))
        return _modify_answer("s2", "Explain that 15 is odd")

    answers = _answers(
        SUM_THEN_EXPLAIN,
        step_result=_blocked_on_first_try("Explain everything about it"),  # pending again, so refinable
        validation=lambda m, n: {"issues": [issue] if n == 0 else []},
        convergence=lambda m, n: json.loads(verdict(n >= 1)),
        refinement=refinement,
    )
    result, _ = run_with(tmp_path, answers, "add 5 and 10 and explain the result", ttl=3)
    (question,) = _kinds(result.advisories, "follow_up_question")
    assert question["step_id"] == "s2" and question["pass_number"] == 1
    assert "it does not say what to explain" in question["question"]
    assert question in msgspec.to_builtins(
        result.history.advisories
    )  # recorded in the execution history, not only the result
    assert json.loads(msgspec.json.encode(result.history))["advisories"]  # and saved with it (--history)
    # the vague fragment triggered a refinement that saw the issue, and the fragment was rewritten
    assert len(refine_prompts) == 1 and "it does not say what to explain" in refine_prompts[0]
    assert [c.applied for c in result.history.passes[0].refinement_changes] == [True]


def test_a_vague_fragment_found_in_the_last_pass_still_gets_a_follow_up_question(tmp_path):
    issue = {"type": "specificity", "severity": "HIGH", "step_id": "s2", "description": "too vague", "repair": ""}
    answers = _answers(
        SUM_THEN_EXPLAIN,
        validation=lambda m, n: {"issues": [issue]},
        convergence=lambda m, n: json.loads(verdict(False)),
    )
    result, _ = run_with(tmp_path, answers, "add 5 and 10 and explain the result", ttl=1)
    assert result.status is RunStatus.TTL_EXPIRED and result.passes == 1
    assert [q["step_id"] for q in _kinds(result.advisories, "follow_up_question")] == ["s2"]


# == Scenario 5: refined fragments are validated before acceptance =====================================================
@pytest.mark.parametrize(
    ("action", "needle"),
    [
        (_modify("s3", "Explain", tool="ghost_tool", dependencies=["s2"]), "ghost_tool"),
        (_modify("s2", "Check parity after explaining", dependencies=["s3"]), "cycle"),
        (_act(A.ADD, new_step=_step("s5", "Use a missing input", dependencies=["nowhere"])), "nowhere"),
        (_subplan_action("s3", _step("a", "Fetch it", tool="web_search")), "web_search"),
    ],
    ids=["unregistered-tool", "dependency-cycle", "missing-dependency", "subplan-with-unregistered-tool"],
)
def test_a_refined_fragment_that_fails_validation_is_rejected_and_the_plan_is_unchanged(action, needle):
    plan, planner = _four_step_plan(), _planner()
    before = _snapshot(plan)
    acc = planner.accept(plan, [action], None, pass_number=1)
    (outcome,) = acc.outcomes
    assert (outcome.applied, outcome.advisory) == (False, True)
    assert outcome.reason.startswith("refined fragment failed validation") and needle in outcome.reason
    assert _snapshot(plan) == before
    (rejected,) = _kinds(acc.advisories, "refinement_rejected")
    assert rejected["reason"] == outcome.reason and rejected["pass_number"] == 1


def test_a_valid_refinement_next_to_a_rejected_one_is_still_applied():
    plan, planner = _four_step_plan(), _planner()
    acc = planner.accept(
        plan,
        [_modify("s3", "Explain", tool="ghost_tool"), _modify("s4", "State that 15 is odd", dependencies=["s3"])],
        None,
        pass_number=1,
    )
    assert [o.applied for o in acc.outcomes] == [False, True]
    assert plan.step("s3").tool is None and plan.step("s4").description == "State that 15 is odd"


def test_a_cycle_is_rejected_even_where_the_plan_already_had_a_minor_issue():
    plan = Plan(
        goal="g",
        steps=[_step("s1", "Use c", dependencies=["s3"]), _step("s2", "b"), _step("s3", "Make c")],
    )
    before = _snapshot(plan)
    acc = _planner().accept(plan, [_modify("s3", "Make c from a", dependencies=["s1"])], None, pass_number=1)
    assert [o.applied for o in acc.outcomes] == [False]
    assert _snapshot(plan) == before


def test_an_unregistered_tool_is_rejected_even_where_the_plan_already_had_a_minor_issue():
    plan = Plan(goal="g", steps=[_step("s1", "Use b", dependencies=["s2"]), _step("s2", "Make b")])
    before = _snapshot(plan)
    action = _modify("s1", "Use b", tool="ghost_tool", dependencies=["s2"])
    acc = _planner().accept(plan, [action], None, pass_number=1)
    assert [o.applied for o in acc.outcomes] == [False]
    assert _snapshot(plan) == before


def test_a_model_refinement_naming_an_unregistered_tool_never_reaches_the_plan(tmp_path):
    bad = {
        "actions": [
            {
                "action_type": "MODIFY",
                "target_step_id": "s2",
                "new_step": {"step_id": "s2", "description": "Search the web", "tool": "web_search", "args": {}},
                "substeps": [],
                "justification": "look it up",
            }
        ]
    }
    answers = _answers(
        SUM_THEN_EXPLAIN,
        step_result=_blocked,
        convergence=lambda m, n: json.loads(verdict(False)),
        refinement=lambda m, n: bad,  # the supervisor's repairs get the same answer
    )
    result, _ = run_with(tmp_path, answers, "add 5 and 10 and explain the result", ttl=2)
    first, second = result.history.passes
    assert first.refinement_changes == []
    (failed,) = _kinds(result.advisories, "refinement_failed")
    assert "web_search" in failed["detail"] and failed["pass_number"] == 1
    assert _by_id(first.final_plan_state or {})["s2"]["description"] == "Explain everything about it"
    assert second.plan_state == first.final_plan_state  # the next pass runs the plan as it was
    assert all(s.get("tool") != "web_search" for s in msgspec.to_builtins(result.plan)["steps"])


# == Per-fragment (3) and global (10) refinement limits ================================================================
def test_the_fourth_attempt_on_a_fragment_is_rejected_and_its_best_version_is_kept():
    plan, planner = _four_step_plan(), _planner()
    assert PER_FRAGMENT_LIMIT == 3
    for n in range(1, 4):
        acc = planner.accept(plan, [_modify("s3", f"version {n}", dependencies=["s2"])], None, pass_number=n)
        assert [o.applied for o in acc.outcomes] == [True]
    acc = planner.accept(plan, [_modify("s3", "version 4", dependencies=["s2"])], None, pass_number=4)
    (outcome,) = acc.outcomes
    assert not outcome.applied and "refinement limit (3)" in outcome.reason
    assert plan.step("s3").description == "version 3"
    assert [a["step_id"] for a in _kinds(acc.advisories, "refinement_rejected")] == ["s3"]
    # the limit is per fragment: another fragment can still be refined
    other = planner.accept(plan, [_modify("s4", "State it", dependencies=["s3"])], None, pass_number=4)
    assert [o.applied for o in other.outcomes] == [True]


def test_attempts_rejected_by_validation_count_towards_the_fragment_limit():
    plan, planner = _four_step_plan(), _planner()
    for n in range(1, 4):
        acc = planner.accept(plan, [_modify("s3", f"try {n}", tool="ghost_tool")], None, pass_number=n)
        assert "failed validation" in acc.outcomes[0].reason
    acc = planner.accept(plan, [_modify("s3", "a good one", dependencies=["s2"])], None, pass_number=4)
    assert not acc.outcomes[0].applied and "refinement limit" in acc.outcomes[0].reason
    assert plan.step("s3").description == "Explain the parity"


def test_the_eleventh_refinement_of_a_run_is_rejected_whatever_its_fragment():
    plan, planner = _four_step_plan(), _planner()
    assert GLOBAL_LIMIT == 10
    adds = [_act(A.ADD, new_step=_step(f"n{i}", f"note {i}")) for i in range(1, 12)]
    first = planner.accept(plan, adds[:6], None, pass_number=1)
    second = planner.accept(plan, adds[6:], None, pass_number=2)  # the limit spans passes
    assert [o.applied for o in first.outcomes + second.outcomes] == [True] * 10 + [False]
    assert "global refinement limit (10)" in second.outcomes[-1].reason
    assert "n11" not in [s.step_id for s in plan.steps] and "n10" in [s.step_id for s in plan.steps]
    assert planner.ledger.total == 10
    later = planner.accept(plan, [_modify("s4", "late", dependencies=["s3"])], None, pass_number=3)
    assert not later.outcomes[0].applied and plan.step("s4").description == "State the answer"


def test_a_run_that_keeps_refining_the_same_fragment_stops_after_three_attempts(tmp_path):
    def refinement(messages: Any, nth: int) -> dict[str, Any]:
        return _modify_answer("s2", f"Explain it, attempt {nth + 1}")

    answers = _answers(
        SUM_THEN_EXPLAIN,
        task_profile=lambda m, n: json.loads(profile(5, sufficiency=0.0, breadth="broad", confidence="high")),
        step_result=_blocked,  # s2 never becomes clear, so the refiner keeps proposing a new version
        convergence=lambda m, n: json.loads(verdict(False)),
        refinement=refinement,
    )
    result, _ = run_with(tmp_path, answers, "add 5 and 10 and explain the result", ttl=5, max_llm_calls=100)
    assert result.status is RunStatus.TTL_EXPIRED and result.passes == 5  # ends normally, no error
    applied = [c.applied for p in result.history.passes for c in p.refinement_changes]
    assert applied == [True, True, True, False]
    (rejected,) = _kinds(result.advisories, "refinement_rejected")
    assert rejected["step_id"] == "s2" and rejected["pass_number"] == 4 and "limit (3)" in rejected["reason"]
    assert _by_id(result.plan)["s2"]["description"] == "Explain it, attempt 3"  # best available version


# == Scenario 7: nesting past depth 5 fails gracefully =================================================================
def test_nesting_past_depth_five_is_flagged_frozen_and_loses_nothing():
    plan, planner = _four_step_plan(), _planner()
    s2_before = msgspec.json.encode(plan.step("s2"))
    target = "s3"
    for depth in range(1, MAX_DEPTH + 1):
        acc = planner.accept(plan, [_subplan_action(target, _step("x", f"level {depth}"))], None, pass_number=depth)
        assert [o.applied for o in acc.outcomes] == [True]
        target = f"{target}.1"
        assert planner.ledger.depth[target] == depth
    assert target == "s3" + ".1" * MAX_DEPTH
    before = _snapshot(plan)
    acc = planner.accept(plan, [_subplan_action(target, _step("x", "level 6"))], None, pass_number=6)
    (outcome,) = acc.outcomes
    assert (outcome.applied, outcome.manual_intervention) == (False, True)
    (manual,) = _kinds(acc.advisories, "manual_intervention")
    assert manual["step_id"] == target and manual["max_depth"] == MAX_DEPTH and "exceeds maximum 5" in manual["reason"]
    # the plan structure stays; only a note is added to the flagged fragment
    after = plan.to_dict()
    assert [s["step_id"] for s in after["steps"]] == [s["step_id"] for s in json.loads(before)["steps"]]
    assert any("manual intervention" in e for e in plan.step(target).errors)
    # work already done is untouched
    assert plan.step("s1").status is StepStatus.COMPLETE and plan.step("s1").step_output == 15
    assert msgspec.json.encode(plan.step("s2")) == s2_before
    # refinement stops for that fragment, but not for the others: the run goes on
    again = planner.accept(plan, [_modify(target, "anything")], None, pass_number=7)
    assert not again.outcomes[0].applied and "awaits manual intervention" in again.outcomes[0].reason
    elsewhere = planner.accept(plan, [_modify("s4", "State it", dependencies=["s3.1.1.1.1.1"])], None, pass_number=7)
    assert [o.applied for o in elsewhere.outcomes] == [True]


def test_a_run_that_nests_too_deep_keeps_its_completed_steps_and_outputs(tmp_path):
    def deeper(messages: Any, nth: int) -> dict[str, Any]:
        target = "s2" + ".1" * nth
        return {
            "actions": [
                {
                    "action_type": "SUBPLAN_CREATE",
                    "target_step_id": target,
                    "new_step": {"step_id": target, "description": "split"},
                    "substeps": [{"step_id": "x", "description": "Think harder", "agent": "llm"}],
                    "justification": "still too broad",
                }
            ]
        }

    plan = {
        "goal": "g",
        "steps": [
            {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expression": "5 + 10"}},
            {"step_id": "s2", "description": "Think", "agent": "llm"},
        ],
    }
    answers = _answers(
        plan,
        task_profile=lambda m, n: json.loads(profile(5, sufficiency=0.0, breadth="broad", confidence="high")),
        step_result=_blocked,
        convergence=lambda m, n: json.loads(verdict(False)),
        refinement=deeper,
    )
    result, _ = run_with(tmp_path, answers, "add 5 and 10 and think", ttl=8, max_llm_calls=200)
    assert result.status is RunStatus.TTL_EXPIRED and result.error is None  # graceful: no error, no exception
    (manual,) = _kinds(result.advisories, "manual_intervention")
    assert manual["step_id"] == "s2" + ".1" * MAX_DEPTH
    assert msgspec.to_builtins(result.history.final_result.metadata["manual_intervention"]) == [manual]
    assert (
        document(result)["outputs"]["s1"]["status"] == "complete" and document(result)["outputs"]["s1"]["output"] == 15
    )
    assert _by_id(result.plan)["s1"]["step_output"] == 15
    assert result.passes > 6  # execution continued after the fragment was flagged


# == Scenario 6: validator repairs that conflict with the planner ======================================================
def test_a_validator_repair_for_the_refined_step_is_surfaced_and_the_planner_wins():
    plan, planner = _four_step_plan(), _planner()
    report = _report(_issue("s3", issue_id="V7"), _issue("s4", issue_id="V8"))
    acc = planner.accept(plan, [_modify("s3", "Planner's version", dependencies=["s2"])], report, pass_number=2)
    (conflict,) = _kinds(acc.advisories, "repair_conflict")
    assert conflict["step_id"] == "s3" and conflict["issue_id"] == "V7" and conflict["pass_number"] == 2
    assert conflict["validator_repair"] == report.issues[0].proposed_repair
    assert conflict["planner_action"] == "MODIFY" and "planner" in conflict["resolution"]
    assert plan.step("s3").description == "Planner's version"  # the planner's refinement is what applies


def test_an_issue_without_a_proposed_repair_is_no_conflict():
    plan, planner = _four_step_plan(), _planner()
    report = _report(_issue("s3", repair=False))
    acc = planner.accept(plan, [_modify("s3", "Planner's version", dependencies=["s2"])], report, pass_number=1)
    assert _kinds(acc.advisories, "repair_conflict") == []


def test_no_conflict_claims_the_planner_won_when_its_refinement_was_rejected():
    plan, planner = _four_step_plan(), _planner()
    report = _report(_issue("s1", issue_id="V1"))
    acc = planner.accept(plan, [_modify("s1", "Redo it")], report, pass_number=1)
    assert [o.applied for o in acc.outcomes] == [False]
    assert all("applied" not in a.get("resolution", "") for a in _kinds(acc.advisories, "repair_conflict"))


def test_a_run_surfaces_a_conflicting_validator_repair_in_its_metadata(tmp_path):
    issue = {
        "type": "specificity",
        "severity": "HIGH",
        "step_id": "s2",
        "description": "explain what?",
        "repair": "Explain only the parity of 15",
    }
    answers = _answers(
        SUM_THEN_EXPLAIN,
        step_result=_blocked_on_first_try("Explain everything about it"),
        validation=lambda m, n: {"issues": [issue] if n == 0 else []},
        convergence=lambda m, n: json.loads(verdict(n >= 1)),
        refinement=lambda m, n: _modify_answer("s2", "Explain that 15 is odd and greater than 10"),
    )
    result, log = run_with(tmp_path, answers, "add 5 and 10 and explain the result", ttl=3)
    (conflict,) = _kinds(result.advisories, "repair_conflict")
    assert conflict["step_id"] == "s2"
    assert conflict["validator_repair"]["changes"]["suggestion"] == "Explain only the parity of 15"
    assert _by_id(result.plan)["s2"]["description"] == "Explain that 15 is odd and greater than 10"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(r["event"] == "advisory" and r.get("kind") == "repair_conflict" for r in logged)


# == Executed steps are immutable ======================================================================================
@pytest.mark.parametrize(
    "action",
    [
        _modify("s2", "Redo"),
        _act(A.REPLACE, target_step_id="s2", new_step=_step("s2", "Redo")),
        _act(A.REMOVE, target_step_id="s2"),
        _act(A.STEP_MARK_INVALID, target_step_id="s2"),
        _subplan_action("s2", _step("a", "Redo in parts")),
    ],
    ids=lambda a: a.action_type.value,
)
def test_no_refinement_touches_a_failed_step(action):
    plan, planner = _four_step_plan(), _planner()
    failed = plan.step("s2")
    failed.status, failed.errors, failed.step_output = StepStatus.FAILED, ["tool 'calculator' failed: boom"], None
    before = _snapshot(plan)
    acc = planner.accept(plan, [action], None, pass_number=1)
    (outcome,) = acc.outcomes
    assert not outcome.applied and "executed step s2 (failed)" in outcome.reason
    assert _snapshot(plan) == before
    assert [a["step_id"] for a in _kinds(acc.advisories, "refinement_rejected")] == ["s2"]


def test_an_inconsistent_rewrite_names_the_executed_step_and_refines_only_the_pending_one():
    plan, planner = _four_step_plan(), _planner()
    s1_before = msgspec.json.encode(plan.step("s1"))
    action = _act(
        A.MODIFY,
        target_step_id="s3",
        new_step=_step("s3", "Explain with the corrected sum", dependencies=["s2"]),
        inconsistency_detected=True,
        semantic_validation_input=[
            ValidationIssue(
                issue_id="V1",
                type=IssueType.CONSISTENCY,
                severity=Severity.MEDIUM,
                description="sum looks wrong",
                location={"step_id": "s1"},
            )
        ],
    )
    (outcome,) = planner.accept(plan, [action], None, pass_number=1).outcomes
    assert outcome.applied and outcome.contradicts == ["s1"]
    assert msgspec.json.encode(plan.step("s1")) == s1_before  # reported, never rewritten
    assert plan.step("s3").description == "Explain with the corrected sum"


# == Scenario 4 / SC-011: plans stay declarative JSON ==================================================================
def test_a_refined_plan_round_trips_through_json_unchanged():
    plan, planner = _four_step_plan(), _planner()
    planner.accept(
        plan,
        [
            _subplan_action("s3", _step("a", "Say whether it is odd"), _step("b", "Say why")),
            _act(A.ADD, new_step=_step("s5", "Conclude"), position_after="s4"),
            _modify("s4", "State it", dependencies=["s3.2"]),
        ],
        None,
        pass_number=1,
    )
    text = json.dumps(plan.to_dict())  # plain JSON: no callables, no code objects
    back = msgspec.convert(json.loads(text), Plan)
    assert back.to_dict() == plan.to_dict()
    assert [s.step_id for s in back.steps] == ["s1", "s2", "s3.1", "s3.2", "s4", "s5"]


def test_every_plan_state_of_a_refining_run_is_json_that_rebuilds_the_same_plan(tmp_path):
    answers = _answers(
        SUM_THEN_EXPLAIN,
        step_result=_blocked_on_first_try("Explain everything about it"),
        convergence=lambda m, n: json.loads(verdict(n >= 1)),
        refinement=lambda m, n: _modify_answer("s2", "Explain that 15 is odd"),
    )
    result, _ = run_with(tmp_path, answers, "add 5 and 10 and explain the result", ttl=3)
    encoded = msgspec.json.encode(result.history)
    history = msgspec.json.decode(encoded, type=ExecutionHistory)
    assert msgspec.json.encode(history) == encoded
    states = [s for p in history.passes for s in (p.plan_state, p.final_plan_state) if s]
    assert len(states) == 4
    for state in states:
        assert msgspec.json.decode(msgspec.json.encode(state), type=Plan) == state
