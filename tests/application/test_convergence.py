"""User story 3: the convergence rules of the evaluation call; deterministic facts only make the verdict stricter."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.application.errors import UnrecoverableOutput
from aeon.application.judges.convergence import convergence_problems
from aeon.application.judges.evaluator import EVALUATION_SCHEMA, Evaluator
from aeon.application.kernel.run import RunSettings
from aeon.application.llm.gateway import LLMGateway
from aeon.application.llm.prompt_budget import PromptBudget
from aeon.application.llm.prompts.evaluation import EVALUATE
from aeon.application.llm.supervisor import Supervisor
from aeon.domain.evaluation import ConvergenceAssessment, ConvergenceCriteria, SemanticValidationReport
from aeon.domain.history import step_results
from aeon.domain.phases import Stage
from aeon.domain.plan import Plan, PlanStep, StepStatus
from aeon.domain.provenance import FENCE_OPEN, fence
from aeon.domain.records import ToolCall
from aeon.domain.run_state import RunState
from aeon.testing import new_run

from harness import tool_specs

REQUEST = "calculate the sum of 5 and 10"
CALC_15 = ToolCall(step_id="s1", tool="calculator", args={"expression": "5 + 10"}, output=15)


def evaluator(
    responses: list[str], criteria: ConvergenceCriteria | None = None
) -> tuple[Evaluator, ScriptedLLM, RunState]:
    run = new_run(REQUEST, settings=RunSettings(max_llm_calls=20), stage=Stage.EVALUATE)
    llm = ScriptedLLM(responses)
    supervisor = Supervisor(LLMGateway(llm, run), run.record, run.state.counters, tool_specs())
    ids = iter(f"val-{n}" for n in range(1, 100))
    return (
        Evaluator(
            supervisor,
            criteria or ConvergenceCriteria(),
            tool_specs(),
            new_id=lambda: next(ids),
            budget=PromptBudget(run, window=8192, reserve=512, prefix=""),
        ),
        llm,
        run.state,
    )


def plan(answer: str = "The sum of 5 and 10 is 15.", *, s2: StepStatus = StepStatus.COMPLETE) -> Plan:
    return Plan(
        goal=REQUEST,
        steps=[
            PlanStep(
                step_id="s1",
                description="Add 5 and 10",
                tool="calculator",
                args={"expression": "5 + 10"},
                status=StepStatus.COMPLETE,
                step_output=15,
            ),
            PlanStep(
                step_id="s2",
                description="State the sum",
                agent="llm",
                status=s2,
                step_output=answer if s2 is StepStatus.COMPLETE else None,
                errors=["provider refused"] if s2 is StepStatus.FAILED else [],
            ),
        ],
    )


def issue(severity: str, description: str, sid: str = "s2", kind: str = "consistency") -> dict[str, str]:
    return {"type": kind, "severity": severity, "step_id": sid, "description": description, "repair": "fix it"}


def judged(completeness: Any = 1.0, coherence: Any = 0.9, consistent: Any = True, **extra: Any) -> str:
    body = {
        "completeness_score": completeness,
        "coherence_score": coherence,
        "consistent": consistent,
        "explanation": "The sum was computed and stated.",
        "issues": [],
        **extra,
    }
    return json.dumps(body)


def evaluate(ev: Evaluator, p: Plan, calls=(CALC_15,)) -> tuple[SemanticValidationReport, ConvergenceAssessment]:
    return asyncio.run(
        ev.evaluate(
            request=REQUEST, profile_text="reasoning_depth 1", plan=p, results=step_results(p), tool_calls=calls
        )
    )


def assess(ev: Evaluator, p: Plan, calls=(CALC_15,)) -> ConvergenceAssessment:
    return evaluate(ev, p, calls)[1]


def test_all_criteria_met_converges_with_exactly_the_three_positive_codes():
    ev, llm, _ = evaluator([judged()])
    a = assess(ev, plan())
    assert a.converged is True
    assert a.reason_codes == ["complete", "coherent", "consistent"]
    assert a.scores == {
        "completeness_score": 1.0,
        "coherence_score": 0.9,
        "consistency_status": {"consistent": True, "llm_consistent": True, "grounded": True},
    }
    assert a.explanation == "The sum was computed and stated." and a.detected_issues == []
    assert llm.requests[0].schema == EVALUATION_SCHEMA and llm.requests[0].schema_name == "evaluation"


def test_complete_but_incoherent_does_not_converge_and_names_the_failing_criterion():
    ev, *_ = evaluator([judged(coherence=0.3, issues=[issue("LOW", "the answer contradicts step s1")])])
    a = assess(ev, plan())
    assert a.converged is False
    assert a.reason_codes == ["complete", "incoherent", "consistent"]
    assert a.detected_issues == ["the answer contradicts step s1"]


def test_a_failed_step_makes_the_pass_incomplete_even_when_the_llm_says_one():
    p = plan()
    p.steps[1] = PlanStep(
        step_id="s2", description="State the sum", agent="llm", status=StepStatus.FAILED, errors=["provider refused"]
    )
    ev, *_ = evaluator([judged(completeness=1.0)])
    a = assess(ev, p)
    assert a.converged is False
    assert a.reason_codes == ["incomplete", "coherent", "consistent", "failed_step:s2"]
    assert "step s2 failed: provider refused" in a.detected_issues
    assert a.scores["completeness_score"] == 1.0  # the model's score is reported, the fact decides


def test_a_pending_step_makes_the_pass_incomplete():
    ev, *_ = evaluator([judged()])
    a = assess(ev, plan(s2=StepStatus.PENDING))
    assert a.converged is False and a.reason_codes[0] == "incomplete" and "unfinished_step:s2" in a.reason_codes


def test_a_validation_issue_above_the_threshold_blocks_convergence():
    ev, *_ = evaluator([judged(issues=[issue("HIGH", "step s2 ignores s1")])])
    a = assess(ev, plan())
    assert a.converged is False
    assert a.reason_codes == ["complete", "coherent", "consistent", "validation_blocker"]
    assert a.detected_issues == ["V1 HIGH consistency: step s2 ignores s1"]


def test_a_deterministic_blocker_is_shown_to_the_model_and_blocks_convergence():
    p = plan()
    p.steps[1].dependencies = ["s9"]
    ev, llm, _ = evaluator([judged()])
    a = assess(ev, p)
    fact = "step s2 depends on 's9', which is not in the plan"
    assert a.converged is False and "validation_blocker" in a.reason_codes
    assert f"D1 HIGH consistency: {fact}" in a.detected_issues
    assert f"- HIGH consistency: {fact}" in llm.requests[0].messages[-1].content


def test_a_validation_issue_at_the_threshold_does_not_block():
    ev, *_ = evaluator([judged(issues=[issue("MEDIUM", "step s2 could cite s1")])])
    a = assess(ev, plan())
    assert a.converged is True and a.detected_issues == ["step s2 could cite s1"]


def test_a_grounding_hallucination_overrides_an_llm_consistent_true():
    ev, llm, _ = evaluator([judged(consistent=True)])
    a = assess(ev, plan("The calculator returned 16, so the sum is 16."))
    message = "hallucination: answer claims calculator produced 16 but it produced 15"
    assert a.converged is False
    assert a.reason_codes == ["complete", "coherent", "inconsistent", "hallucination"]
    assert a.scores["consistency_status"] == {"consistent": False, "llm_consistent": True, "grounded": False}
    assert a.detected_issues[0] == message
    assert message in llm.requests[0].messages[-1].content  # the model is told the fact too


def test_an_llm_inconsistent_verdict_is_kept():
    ev, *_ = evaluator([judged(consistent=False)])
    a = assess(ev, plan())
    assert a.converged is False and a.reason_codes == ["complete", "coherent", "inconsistent"]


def test_consistency_may_be_made_optional():
    ev, *_ = evaluator([judged(consistent=False)], ConvergenceCriteria(require_consistency=False))
    a = assess(ev, plan())
    assert a.converged is True and a.reason_codes == ["complete", "coherent", "inconsistent"]


@pytest.mark.parametrize(
    ("criteria", "converged"), [(ConvergenceCriteria(), True), (ConvergenceCriteria(min_completeness=0.95), False)]
)
def test_custom_criteria_change_the_verdict_for_the_same_answer(criteria, converged):
    ev, *_ = evaluator([judged(completeness=0.9)], criteria)
    a = assess(ev, plan())
    assert a.converged is converged
    assert a.reason_codes[0] == ("complete" if converged else "incomplete")


def test_a_score_out_of_range_costs_one_llm_repair():
    ev, llm, state = evaluator([judged(completeness=1.5), judged()])
    a = assess(ev, plan())
    assert a.converged is True
    assert state.counters.llm_repairs == 1 and len(llm.requests) == 2
    assert "completeness_score: 1.5 is outside 0..1" in llm.requests[1].messages[-1].content


def test_three_unusable_judgements_are_unrecoverable():
    ev, llm, state = evaluator(["done!", judged(coherence="high"), "{}"])
    with pytest.raises(UnrecoverableOutput):
        assess(ev, plan())
    assert state.counters.llm_repairs == 2 and len(llm.requests) == 3


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"coherence_score": 1, "consistent": True, "explanation": "x"}, "'completeness_score' is a required property"),
        ({"completeness_score": True, "coherence_score": 1, "consistent": True, "explanation": "x"}, "not a number"),
        ({"completeness_score": 1, "coherence_score": -0.1, "consistent": True, "explanation": "x"}, "outside 0..1"),
        ({"completeness_score": 1, "coherence_score": 1, "consistent": "yes", "explanation": "x"}, "not a boolean"),
        ({"completeness_score": 1, "coherence_score": 1, "consistent": True, "explanation": ""}, "explanation"),
        (
            {"completeness_score": 1, "coherence_score": 1, "consistent": True, "explanation": "x", "issues": "a"},
            "issues",
        ),
        ([1], "JSON object"),
    ],
)
def test_convergence_problems_name_the_bad_field(value, fragment):
    [problem] = convergence_problems(value)
    assert fragment in problem


def test_a_missing_issue_list_counts_as_empty():
    assert (
        convergence_problems({"completeness_score": 0, "coherence_score": 1, "consistent": False, "explanation": "x"})
        == []
    )


def test_the_prompt_shows_request_plan_outputs_final_answer_and_known_issues_last():
    p = plan()
    p.steps[1].dependencies = ["s9"]
    ev, llm, _ = evaluator([judged()])
    assess(ev, p)
    prompt = llm.requests[0].messages[-1].content
    tail = prompt.split(f"Request: {REQUEST}\n")[-1]
    assert tail.startswith("Profile: reasoning_depth 1\nPlan:\n- s1: Add 5 and 10 | tool calculator")
    s2 = f"- s2: State the sum | agent llm | complete | output:\n{FENCE_OPEN} from step s2"
    assert f"| complete | output:\n{fence('15', 'step s1')}\n{s2}" in tail  # each output fenced as data
    assert tail.endswith(
        f"Final answer: {fence('The sum of 5 and 10 is 15.', 'the final answer')}\nValidation issues:\n"
        "- HIGH consistency: step s2 depends on 's9', which is not in the plan\nAssessment:"
    )


def test_with_no_completed_step_the_prompt_says_so():
    p = Plan(goal=REQUEST, steps=[PlanStep(step_id="s1", description="Add", tool="calculator")])
    ev, llm, _ = evaluator([judged()])
    a = assess(ev, p, calls=())
    assert (
        "Final answer: (no step completed)\nValidation issues:\n(none)\nAssessment:"
        in llm.requests[0].messages[-1].content
    )
    assert a.converged is False


def test_the_evaluate_prompt_keeps_its_static_part_in_its_guide_and_sends_only_the_changing_slots():
    assert EVALUATE.slots == {"request", "profile", "plan", "answer", "issues"}
    assert "Assessment: {" in EVALUATE.guide and not re.search(r"\$\{\w+\}", EVALUATE.guide)
    assert EVALUATE.text.startswith("Request: ${request}\nProfile: ${profile}\nPlan:\n${plan}\n")
    assert EVALUATE.text.endswith("Validation issues:\n${issues}\nAssessment:")
