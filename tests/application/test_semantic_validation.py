"""User story 5: semantic validation reports deterministic facts and the advisory issues of the evaluation call."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.application.errors import UnrecoverableOutput
from aeon.application.judges.evaluator import EVALUATION_SCHEMA, Evaluator
from aeon.application.kernel.run import RunSettings
from aeon.application.llm.gateway import LLMGateway
from aeon.application.llm.prompt_budget import PromptBudget
from aeon.application.llm.supervisor import Supervisor
from aeon.application.plans.semantic_validation import deterministic_issues, validation_problems
from aeon.domain.evaluation import ArtifactType, ConvergenceCriteria, IssueType, SemanticValidationReport, Severity
from aeon.domain.history import StepResult
from aeon.domain.phases import Stage
from aeon.domain.plan import ExecutionMode, Plan, PlanStep, StepStatus
from aeon.domain.provenance import fence
from aeon.domain.run_state import RunState
from aeon.testing import ListLog, new_run

from harness import tool_specs

TOOLS = {t.name: t for t in tool_specs()}


def step(sid: str, *, tool: str | None = "calculator", deps: tuple[str, ...] = (), **kw: Any) -> PlanStep:
    args = kw.pop("args", {"expression": "5 + 10"} if tool == "calculator" else {})
    return PlanStep(
        step_id=sid,
        description=kw.pop("description", f"do {sid}"),
        tool=tool,
        agent=None if tool else "llm",
        args=args,
        dependencies=list(deps),
        **kw,
    )


def validator(responses: list[str]) -> tuple[Evaluator, ScriptedLLM, RunState, ListLog]:
    log = ListLog()
    run = new_run(
        "calculate the sum of 5 and 10", settings=RunSettings(max_llm_calls=20), stage=Stage.EVALUATE, log=log
    )
    llm = ScriptedLLM(responses)
    ids = iter(f"val-{n}" for n in range(1, 100))
    specs = tool_specs()
    supervisor = Supervisor(LLMGateway(llm, run), run.record, run.state.counters, specs)
    return (
        Evaluator(
            supervisor,
            ConvergenceCriteria(),
            specs,
            new_id=lambda: next(ids),
            budget=PromptBudget(run, window=8192, reserve=512, prefix=""),
        ),
        llm,
        run.state,
        log,
    )


def validate(
    ev: Evaluator, plan: Plan, results: dict[str, StepResult] | None = None, **kw: Any
) -> SemanticValidationReport:
    report, _ = asyncio.run(
        ev.evaluate(
            request=kw.get("request", "calculate the sum of 5 and 10"),
            profile_text=kw.get("profile_text", "reasoning_depth 1, information_sufficiency 0.9"),
            plan=plan,
            results=results or {},
            tool_calls=[],
        )
    )
    return report


def answer(*issues: dict[str, str]) -> str:
    judgement = {"completeness_score": 1, "coherence_score": 1, "consistent": True, "explanation": "fine"}
    return json.dumps({**judgement, "issues": list(issues)})


def issue(kind: str, severity: str, sid: str, description: str, repair: str = "fix it") -> dict[str, str]:
    return {"type": kind, "severity": severity, "step_id": sid, "description": description, "repair": repair}


# -- deterministic facts ----------------------------------------------------------------------------------------
def test_a_sound_plan_has_no_deterministic_issues():
    plan = Plan(goal="g", steps=[step("s1"), step("s2", tool=None, deps=("s1",))])
    assert deterministic_issues(plan, TOOLS) == []


def test_an_unregistered_tool_is_a_high_hallucination_with_a_replace_tool_repair():
    plan = Plan(goal="g", steps=[step("s1"), step("s2", tool="calculater", args={"expression": "1"})])
    [found] = deterministic_issues(plan, TOOLS)
    assert (found.issue_id, found.type, found.severity, found.source) == (
        "D1",
        IssueType.HALLUCINATION,
        Severity.HIGH,
        "deterministic",
    )
    assert found.location == {"step_id": "s2", "artifact_reference": "plan.steps[1].tool"}
    assert found.proposed_repair is not None
    assert found.proposed_repair["action"] == "replace_tool" and found.proposed_repair["target"] == "s2"
    assert found.proposed_repair["changes"] == {"tool": "calculater", "candidates": ["calculator"]}


def test_a_dependency_cycle_is_one_high_consistency_issue_not_also_a_later_dependency():
    plan = Plan(goal="g", steps=[step("s1", deps=("s2",)), step("s2", deps=("s1",)), step("s3", deps=("s2",))])
    [found] = deterministic_issues(plan, TOOLS)
    assert (found.type, found.severity) == (IssueType.CONSISTENCY, Severity.HIGH)
    assert found.description == "dependency cycle between steps s1, s2"
    assert found.location is not None and found.location["step_id"] == "s1"


def test_a_step_depending_on_itself_is_a_cycle():
    [found] = deterministic_issues(Plan(goal="g", steps=[step("s1", deps=("s1",))]), TOOLS)
    assert (found.type, found.severity, found.description) == (
        IssueType.CONSISTENCY,
        Severity.HIGH,
        "step s1 depends on itself",
    )


def test_a_dependency_on_a_missing_step_is_high():
    [found] = deterministic_issues(Plan(goal="g", steps=[step("s1", deps=("s9",))]), TOOLS)
    assert (found.type, found.severity) == (IssueType.CONSISTENCY, Severity.HIGH)
    assert "'s9'" in found.description and "not in the plan" in found.description
    assert found.proposed_repair == {
        "action": "logical_correction",
        "target": "s1",
        "changes": {"remove_dependency": "s9"},
    }


def test_a_dependency_on_a_later_step_is_medium():
    [found] = deterministic_issues(Plan(goal="g", steps=[step("s1", deps=("s2",)), step("s2")]), TOOLS)
    assert (found.type, found.severity) == (IssueType.CONSISTENCY, Severity.MEDIUM)
    assert found.description == "step s1 depends on s2, which runs later"


def test_issue_ids_are_stable_in_plan_order():
    plan = Plan(
        goal="g",
        steps=[step("s1", deps=("s3",)), step("s2", tool="adder", args={}, deps=("zz",)), step("s3")],
    )
    first, second = deterministic_issues(plan, TOOLS), deterministic_issues(plan, TOOLS)
    assert [(i.issue_id, (i.location or {})["step_id"], i.severity) for i in first] == [
        ("D1", "s1", Severity.MEDIUM),
        ("D2", "s2", Severity.HIGH),
        ("D3", "s2", Severity.HIGH),
    ]
    assert first == second


# -- the LLM review ---------------------------------------------------------------------------------------------
def test_llm_issues_merge_after_the_facts_and_a_duplicate_hallucination_is_dropped():
    plan = Plan(goal="g", steps=[step("s1", tool="adder", args={}), step("s2", tool=None, description="stuff")])
    v, llm, _, log = validator(
        [
            answer(
                issue("hallucination", "CRITICAL", "s1", "adder is not a tool"),
                issue("specificity", "low", "s2", "'stuff' says nothing", "say what to explain"),
            )
        ]
    )
    report = validate(v, plan)
    assert [(i.issue_id, i.type, i.source) for i in report.issues] == [
        ("D1", IssueType.HALLUCINATION, "deterministic"),
        ("V1", IssueType.SPECIFICITY, "llm"),
    ]
    v1 = report.issues[1]
    assert v1.severity is Severity.LOW
    assert v1.location == {"step_id": "s2", "artifact_reference": "cross_phase"}
    assert v1.proposed_repair == {
        "action": "rewrite_step",
        "target": "s2",
        "changes": {"suggestion": "say what to explain"},
    }
    assert report.validation_id == "val-1" and report.advisory is True
    assert report.artifact_type is ArtifactType.CROSS_PHASE
    assert [e for e, f in log.events if e == "llm_call" and f["purpose"] == "evaluate"] == ["llm_call"]
    assert llm.requests[0].schema == EVALUATION_SCHEMA and llm.requests[0].schema_name == "evaluation"


def test_summary_overall_severity_and_repairs_agree_with_the_issues():
    plan = Plan(goal="g", steps=[step("s1", deps=("s2",)), step("s2")])
    v, *_ = validator(
        [answer(issue("relevance", "HIGH", "s2", "not needed"), issue("consistency", "LOW", "s1", "odd"))]
    )
    report = validate(v, plan)
    assert report.issue_summary == {
        "specificity": 0,
        "relevance": 1,
        "consistency": 2,
        "hallucination": 0,
        "do_say_mismatch": 0,
    }
    assert report.overall_severity is Severity.HIGH
    assert [r["issue_id"] for r in report.proposed_repairs] == ["D1", "V1", "V2"]


def test_issues_pinned_to_steps_the_plan_lacks_are_dropped_and_cost_no_repair():
    # small models copy the example's step ids ("a1"): such an issue says nothing about this plan
    plan = Plan(goal="g", steps=[step("s1")])
    v, llm, ctx, _ = validator(
        [
            answer(
                issue("relevance", "LOW", "s7", "step s7 is off topic"),
                issue("relevance", "LOW", "", "the plan misses the point"),
            )
        ]
    )
    [found] = validate(v, plan).issues
    assert found.description == "the plan misses the point" and found.location is None
    assert found.proposed_repair is not None and found.proposed_repair["target"] == "plan"
    assert ctx.counters.llm_repairs == 0 and len(llm.requests) == 1


def test_a_do_say_mismatch_the_model_finds_is_reported_with_a_rewrite_repair():
    plan = Plan(goal="g", steps=[step("s1", description="Add 5 and 10", args={"expression": "5 * 10"})])
    v, *_ = validator([answer(issue("do_say_mismatch", "HIGH", "s1", "says add, multiplies", "use 5 + 10"))])
    [found] = validate(v, plan).issues
    assert (found.type, found.severity, found.source) == (IssueType.DO_SAY_MISMATCH, Severity.HIGH, "llm")
    assert found.proposed_repair == {"action": "rewrite_step", "target": "s1", "changes": {"suggestion": "use 5 + 10"}}


def test_an_empty_issue_list_gives_an_empty_low_report():
    v, *_ = validator([answer()])
    report = validate(v, Plan(goal="g", steps=[step("s1")]))
    assert report.issues == [] and report.overall_severity is Severity.LOW


def test_the_prompt_shows_request_profile_steps_outputs_and_the_final_answer():
    plan = Plan(goal="g", steps=[step("s1", status=StepStatus.COMPLETE), step("s2", tool=None)])
    results = {
        "s1": StepResult(status=StepStatus.COMPLETE, output=15, mode=ExecutionMode.TOOL, errors=[]),
        "s2": StepResult(status=StepStatus.COMPLETE, output="The sum is 15.", mode=ExecutionMode.LLM, errors=[]),
    }
    v, llm, *_ = validator([answer()])
    validate(v, plan, results, profile_text="reasoning_depth 2")
    prompt = llm.requests[0].messages[-1].content
    tail = prompt.split("Request: calculate the sum of 5 and 10\n")[-1]
    assert (
        'Profile: reasoning_depth 2\nPlan:\n- s1: do s1 | tool calculator {"expression": "5 + 10"} | complete | '
        in tail
    )
    assert f"output:\n{fence('15', 'step s1')}" in tail
    assert f"- s2: do s2 | agent llm | complete | output:\n{fence('The sum is 15.', 'step s2')}" in tail
    final = fence("The sum is 15.", "the final answer")
    assert tail.endswith(f"Final answer: {final}\nValidation issues:\n(none)\nAssessment:")
    assert "Tools:" not in prompt  # the tool catalogue travels in the run's shared preamble, not per prompt


def test_a_malformed_answer_costs_one_llm_repair():
    bad = json.dumps({"issues": [{"type": "vagueness", "severity": "HIGH", "step_id": "s1", "description": "x"}]})
    v, llm, ctx, _ = validator([bad, answer(issue("specificity", "MEDIUM", "s1", "too vague"))])
    report = validate(v, Plan(goal="g", steps=[step("s1")]))
    assert [i.issue_id for i in report.issues] == ["V1"]
    assert ctx.counters.llm_repairs == 1 and len(llm.requests) == 2
    assert "issues/0/type: 'vagueness' is not one of" in llm.requests[1].messages[-1].content


def test_three_unusable_answers_are_unrecoverable_after_two_repairs():
    v, llm, ctx, _ = validator(["no idea", '{"issues": "none"}', '{"verdict": "fine"}'])
    with pytest.raises(UnrecoverableOutput):
        validate(v, Plan(goal="g", steps=[step("s1")]))
    assert ctx.counters.llm_repairs == 2 and len(llm.requests) == 3


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"issues": []}, []),
        ({"issues": [issue("hallucination", "High", "s1", "d")]}, []),
        ([], ["answer must be a JSON object with an 'issues' list"]),
        ({}, ["(root): 'issues' is a required property"]),
        ({"issues": [{"type": "relevance", "step_id": "s1", "description": " "}]}, ["'severity'", "description"]),
        ({"issues": [{**issue("relevance", "LOW", "s1", "d"), "step_id": 3}]}, ["issues/0/step_id"]),
    ],
)
def test_validation_problems_name_missing_and_invalid_fields(value, expected):
    problems = validation_problems(value)
    assert len(problems) == len(expected)
    for problem, fragment in zip(problems, expected, strict=True):
        assert fragment in problem


def test_only_the_first_four_llm_issues_are_kept():
    items = [issue("relevance", "LOW", "s1", f"issue {n}") for n in range(6)]
    v, *_ = validator([answer(*items)])
    assert [i.issue_id for i in validate(v, Plan(goal="g", steps=[step("s1")])).issues] == ["V1", "V2", "V3", "V4"]
