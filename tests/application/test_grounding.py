"""Grounding: tool claims in a final answer must be backed by the tool-call log.

Negated value claims are not hallucinations; the positive claim is (application/judges/grounding.py).

The log says the calculator returned 15. "The calculator returned 16" claims what it never produced; "the calculator
did not return 16", "without using the calculator" and the like claim nothing the log could contradict.
"""

from __future__ import annotations

import pytest

from aeon.application.judges.grounding import grounding_issues
from aeon.domain.records import ToolCall

from harness import SUM_STEP, plan_json, run
from multipass import first, profile, verdict

TOOLS = ("calculator", "echo")


CALC_15 = ToolCall(step_id="s1", tool="calculator", args={"expression": "5 + 10"}, output=15)


ECHO_HI = ToolCall(step_id="s2", tool="echo", args={"text": "hi"}, output="hi")


@pytest.mark.parametrize(
    "answer",
    [
        "I called the calculator and the sum is 15.",
        "Using echo, the text was repeated.",
        "I used the calculator tool.",
        "The calculator returned 15.",
        "The calculator tool produced 15.",
        "The result, computed via `calculator`, is 15.",
    ],
)
def test_a_claimed_tool_that_was_never_called_is_a_hallucination(answer):
    issues = grounding_issues(answer, [ECHO_HI] if "calculator" in answer else [CALC_15], TOOLS)
    tool = "calculator" if "calculator" in answer else "echo"
    assert issues == [f"hallucination: answer claims tool '{tool}' was used but it was never called"]


def test_a_tool_whose_only_call_failed_was_never_called_successfully():
    failed = ToolCall(step_id="s1", tool="calculator", args={"expression": "1/0"}, error="division by zero")
    assert grounding_issues("I used the calculator.", [failed], TOOLS) == [
        "hallucination: answer claims tool 'calculator' was used but it was never called successfully"
    ]


def test_a_claimed_value_the_tool_never_produced_is_a_hallucination():
    assert grounding_issues("The calculator returned 16.", [CALC_15], TOOLS) == [
        "hallucination: answer claims calculator produced 16 but it produced 15"
    ]


def test_a_claimed_string_the_tool_never_produced_is_a_hallucination():
    assert grounding_issues("echo gave 'hello'", [ECHO_HI], TOOLS) == [
        "hallucination: answer claims echo produced 'hello' but it produced 'hi'"
    ]


@pytest.mark.parametrize(
    "answer",
    [
        "The calculator returned 15.",
        "The calculator returned 15.0.",
        "The calculator tool produced the value 15, so the sum is 15.",
        "The calculator's result was 15.",
        "I called the calculator; the answer is 15.",
    ],
)
def test_claims_backed_by_the_log_pass_and_numbers_compare_numerically(answer):
    assert grounding_issues(answer, [CALC_15], TOOLS) == []


def test_strings_compare_case_insensitively():
    assert grounding_issues('Echo gave "HI".', [ECHO_HI], TOOLS) == []


def test_any_successful_call_of_the_tool_can_back_the_claimed_value():
    second = ToolCall(step_id="s3", tool="calculator", args={"expression": "4 * 5"}, output=20)
    assert grounding_issues("The calculator returned 20.", [CALC_15, second], TOOLS) == []


def test_a_number_inside_a_text_output_backs_a_numeric_claim():
    call = ToolCall(step_id="s1", tool="echo", args={"text": "total 1,250"}, output="total 1,250")
    assert grounding_issues("echo returned 1250", [call], TOOLS) == []


@pytest.mark.parametrize(
    "answer",
    [
        "No calculator was needed: 5 + 10 = 15.",
        "I did this without using the calculator.",
        "Instead of calling the calculator, I added the numbers by hand.",
        "You could have used the calculator here.",
        "The calculator is a registered tool.",
        "The answer is 16.",
        "An echo came back from the canyon.",
        "",
    ],
)
def test_mentions_that_are_not_claims_do_not_fire(answer):
    assert grounding_issues(answer, [], TOOLS) == []


def test_a_negation_in_an_earlier_clause_does_not_hide_a_claim():
    assert grounding_issues("It was not hard. I used the calculator.", [], TOOLS) == [
        "hallucination: answer claims tool 'calculator' was used but it was never called"
    ]


def test_unregistered_names_are_not_checked():
    assert grounding_issues("I used the weather tool.", [], TOOLS) == []


def test_each_message_appears_once_in_answer_order():
    answer = "Using echo I said 'yo'. The calculator returned 16. Echo gave 'hey'. I called the calculator again."
    assert grounding_issues(answer, [CALC_15], TOOLS) == [
        "hallucination: answer claims tool 'echo' was used but it was never called",
        "hallucination: answer claims calculator produced 16 but it produced 15",
    ]


# -- Negated value claims are not hallucinations; the positive claim is (application/judges/grounding.py) -------


CLAIMS_16 = "hallucination: answer claims calculator produced 16 but it produced 15"


REASON = {"step_id": "s2", "description": "State the sum from s1", "agent": "llm"}


@pytest.mark.parametrize(
    "answer",
    [
        "The calculator did not return 16.",
        "the calculator did not return 16",
        "The calculator didn't return 16; it returned 15.",
        "The calculator never returned 16.",
        "The calculator never gave 16.",
        "The calculator has not returned 16.",
        "The calculator wasn't returning 16.",
        "The calculator could not have returned 16.",
        "I never said the calculator returned 16.",
        "If the calculator returned 16, something is wrong.",
        "The calculator returned 15, not 16.",
        "I got 16 without using the calculator.",
        "Without using the calculator, the sum is 16.",
        "The sum is 16, computed without the calculator.",
        "The calculator did not return 16; the calculator returned 15.",
    ],
)
def test_a_negated_value_claim_is_not_a_hallucination(answer: str):
    assert grounding_issues(answer, [CALC_15], TOOLS) == []


@pytest.mark.parametrize(
    "answer",
    [
        "The calculator returned 16.",
        "the calculator returned 16",
        "The calculator's result was 16.",
        "The calculator gave the value 16.",
        "No, the calculator returned 16.",  # the "no" belongs to another clause
        "The calculator did not fail: the calculator returned 16.",
        "The calculator did not return 15; the calculator returned 16.",
    ],
)
def test_the_positive_claim_of_a_value_the_tool_never_produced_is_a_hallucination(answer: str):
    assert grounding_issues(answer, [CALC_15], TOOLS) == [CLAIMS_16]


def test_a_negated_claim_about_a_tool_never_called_is_not_a_claim_that_it_was_called():
    assert grounding_issues("The calculator never returned 16.", [], TOOLS) == []
    assert grounding_issues("I got 16 without using the calculator.", [], TOOLS) == []


@pytest.mark.xfail(strict=True, reason="limitation: a negation more than three words before the claim is not seen")
def test_a_claim_negated_from_further_back_is_not_a_hallucination():
    assert grounding_issues("It is not true that the calculator returned 16.", [CALC_15], TOOLS) == []


def run_answering(tmp_path, answer: str):
    """One evaluated pass: s1 adds 5 and 10 on the calculator (15), s2 answers `answer`, the judge is satisfied."""
    script = [first(profile(3), plan_json(SUM_STEP, REASON)), answer, verdict(True)]
    return run(tmp_path, script, evaluate=True, ttl=1)


def test_a_run_whose_answer_negates_a_value_claim_converges_grounded(tmp_path):
    r = run_answering(tmp_path, "The calculator did not return 16; the sum is 15.")
    conv = r.doc["convergence"]
    assert r.result.status == "completed" and r.result.converged is True
    assert conv["reason_codes"] == ["complete", "coherent", "consistent"]
    assert conv["scores"]["consistency_status"]["grounded"] is True and conv["detected_issues"] == []
    assert r.llm.requests[-1].messages[-1].content.endswith("Validation issues:\n(none)\nAssessment:")  # none told


def test_a_run_whose_answer_claims_a_value_never_produced_does_not_converge(tmp_path):
    r = run_answering(tmp_path, "The calculator returned 16.")
    conv = r.doc["convergence"]
    assert r.result.converged is False  # although the judge called it complete, coherent and consistent
    assert conv["reason_codes"] == ["complete", "coherent", "inconsistent", "hallucination"]
    assert conv["scores"]["consistency_status"] == {"consistent": False, "llm_consistent": True, "grounded": False}
    assert conv["detected_issues"] == [CLAIMS_16]
    assert CLAIMS_16 in r.llm.requests[-1].messages[-1].content  # the judge is told
