"""Step context and step gating (04 PlanStep): handoff -> incoming context, clarity_state, dependencies.

- what a step hands on becomes the next step's incoming_context and is shown to the model on the `Context:` line;
- the clarity_state a reasoning step returns is recorded; BLOCKED marks the step invalid, never complete;
- a step runs only once all its dependencies are complete: a failed, invalid, later or missing dependency makes it
  invalid and its tool is never invoked.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from aeon.application.results import RunStatus
from aeon.domain.provenance import FENCE_CLOSE, FENCE_OPEN

from harness import document
from multipass import profile, verdict
from responder import prompt_of, run_with

CALC = "calculator"


def _tool_step(step_id: str, expression: str, **kw: Any) -> dict[str, Any]:
    return {
        "step_id": step_id,
        "description": f"Compute {expression}",
        "tool": CALC,
        "args": {"expression": expression},
        **kw,
    }


def _llm_step(step_id: str, description: str, **kw: Any) -> dict[str, Any]:
    return {"step_id": step_id, "description": description, "agent": "llm", **kw}


def _plan(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"goal": "work it out", "steps": list(steps)}


def _reasoning(by_step: dict[str, Any], prompts: dict[str, str]) -> Any:
    """step_result answers keyed by the step description; records each step's prompt."""

    def answer(messages: Any, nth: int) -> Any:
        prompt = prompt_of(messages)
        step = [line for line in prompt.splitlines() if line.startswith("Step: ")][-1].removeprefix("Step: ")
        prompts[step] = prompt
        return by_step[step]

    return answer


def _context_line(prompt: str) -> str:
    """The `Context:` line of the step being asked about (the template's examples come first), a hand-over fenced as
    data shown as its text."""
    lines = prompt.splitlines()
    at = max(i for i, line in enumerate(lines) if line.startswith("Context:"))
    if lines[at].startswith(f"Context: {FENCE_OPEN} from the previous step"):
        assert lines[at + 2] == FENCE_CLOSE
        return f"Context: {lines[at + 1]}"
    return lines[at]


def _run(tmp_path: Any, plan: dict[str, Any], by_step: dict[str, Any] | None = None, **settings: Any):
    prompts: dict[str, str] = {}
    answers = {
        "plan": lambda m, n: plan,
        "step_result": _reasoning(by_step or {}, prompts),
        "step": lambda m, n: {"step_id": "x", "description": "x"},  # tool repair: never usable here
    }
    settings.setdefault("evaluate", False)
    result, log = run_with(tmp_path, answers, "work it out", **settings)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    return result, prompts, records


def _steps(result: Any) -> dict[str, dict[str, Any]]:
    return {s["step_id"]: s for s in document(result)["plan"]["steps"]}


def _invoked(records: list[dict[str, Any]]) -> list[str]:
    return [r["step_id"] for r in records if r["event"] == "tool_call"]


def _answer(text: str, clarity: str = "CLEAR", handoff: str = "") -> dict[str, str]:
    return {"answer": text, "clarity_state": clarity, "handoff_to_next": handoff}


# == handoff_to_next -> incoming_context -> `Context:` ===============================================================
def test_a_reasoning_step_hands_its_context_to_the_next_step(tmp_path):
    plan = _plan(_llm_step("s1", "Work out the sum of 5 and 10"), _llm_step("s2", "Explain the sum"))
    result, prompts, _ = _run(
        tmp_path,
        plan,
        {
            "Work out the sum of 5 and 10": _answer("It is 15.", handoff="the sum is 15"),
            "Explain the sum": _answer("15 is 5 plus 10."),
        },
    )
    steps = _steps(result)
    assert steps["s1"]["handoff_to_next"] == "the sum is 15"
    assert steps["s2"]["incoming_context"] == "the sum is 15"
    assert _context_line(prompts["Explain the sum"]) == "Context: the sum is 15"
    assert steps["s1"]["incoming_context"] == "" and _context_line(prompts["Work out the sum of 5 and 10"]) == (
        "Context: (none)"
    )


def test_a_tool_step_hands_its_result_to_the_next_reasoning_step(tmp_path):
    plan = _plan(_tool_step("s1", "5 + 10"), _llm_step("s2", "Explain the sum"))
    result, prompts, _ = _run(tmp_path, plan, {"Explain the sum": _answer("15.")})
    steps = _steps(result)
    assert steps["s1"]["handoff_to_next"] == "s1 (calculator) returned 15"
    assert steps["s2"]["incoming_context"] == "s1 (calculator) returned 15"
    assert _context_line(prompts["Explain the sum"]) == "Context: s1 (calculator) returned 15"


def test_each_step_gets_the_handoff_of_the_nearest_step_before_it(tmp_path):
    plan = _plan(
        _llm_step("s1", "Pick two numbers"),
        _tool_step("s2", "2 + 3"),
        _llm_step("s3", "Explain the sum"),
    )
    result, prompts, _ = _run(
        tmp_path,
        plan,
        {"Pick two numbers": _answer("2 and 3.", handoff="numbers 2 and 3"), "Explain the sum": _answer("5.")},
    )
    steps = _steps(result)
    assert steps["s2"]["incoming_context"] == "numbers 2 and 3"
    assert steps["s3"]["incoming_context"] == "s2 (calculator) returned 5"  # not s1's older handoff
    assert _context_line(prompts["Explain the sum"]) == "Context: s2 (calculator) returned 5"


# == clarity_state ===================================================================================================
@pytest.mark.parametrize("clarity", ["CLEAR", "PARTIALLY_CLEAR"])
def test_the_clarity_state_of_a_reasoning_step_is_recorded(tmp_path, clarity):
    plan = _plan(_llm_step("s1", "Explain 15"))
    result, _, _ = _run(tmp_path, plan, {"Explain 15": _answer("15 is odd.", clarity)})
    step = _steps(result)["s1"]
    assert (step["status"], step["clarity_state"], step["step_output"]) == ("complete", clarity, "15 is odd.")
    assert document(result)["outputs"]["s1"]["clarity_state"] == clarity
    assert result.history.passes[0].execution_results["s1"].clarity_state == clarity


@pytest.mark.parametrize("blocked", ["BLOCKED", "blocked"])
def test_a_blocked_step_is_invalid_not_complete(tmp_path, blocked):
    plan = _plan(_llm_step("s1", "Compare the flight prices"), _llm_step("s2", "Say something else"))
    result, _, _ = _run(
        tmp_path,
        plan,
        {
            "Compare the flight prices": _answer("No flights were found.", blocked, "no flight data"),
            "Say something else": _answer("Something else."),
        },
    )
    steps = _steps(result)
    assert steps["s1"]["status"] == "invalid" and steps["s1"]["clarity_state"] == "BLOCKED"
    assert any("BLOCKED" in e for e in steps["s1"]["errors"])
    assert document(result)["outputs"]["s1"] == {
        "status": "invalid",
        "output": "No flights were found.",
        "mode": "llm",
        "errors": steps["s1"]["errors"],
        "clarity_state": "BLOCKED",
    }
    assert steps["s2"]["status"] == "complete"  # an independent step still runs
    assert result.answer == "Something else."  # a blocked step's text is not the answer


def test_a_blocked_step_keeps_the_pass_from_converging_whatever_the_model_says(tmp_path):
    plan = _plan(_tool_step("s1", "5 + 10"), _llm_step("s2", "Explain the flights"))
    answers = {
        "task_profile": lambda m, n: json.loads(profile(1, sufficiency=1.0, breadth="narrow", confidence="low")),
        "plan": lambda m, n: plan,
        "step_result": lambda m, n: _answer("Nothing to explain.", "BLOCKED"),
        "validation": lambda m, n: {"issues": []},
        "convergence": lambda m, n: json.loads(verdict(True)),
        "refinement": lambda m, n: {"actions": []},
    }
    result, _ = run_with(tmp_path, answers, "work it out", ttl=1)
    assert result.converged is False
    assert "unfinished_step:s2" in result.convergence.reason_codes


def test_a_plain_text_reasoning_answer_counts_as_clear(tmp_path):
    plan = _plan(_llm_step("s1", "Explain 15"), _llm_step("s2", "Conclude"))
    result, prompts, _ = _run(tmp_path, plan, {"Explain 15": "15 is odd, not JSON.", "Conclude": "Done."})
    step = _steps(result)["s1"]
    assert (step["status"], step["clarity_state"], step["step_output"]) == ("complete", "CLEAR", "15 is odd, not JSON.")
    assert step["handoff_to_next"] == ""
    assert _context_line(prompts["Conclude"]) == "Context: (none)"


# == dependencies gate execution ====================================================================================
def test_a_step_whose_dependency_failed_is_invalid_and_its_tool_never_runs(tmp_path):
    plan = _plan(
        _tool_step("s1", "1 / 0"),
        _tool_step("s2", "2 + 2", dependencies=["s1"]),
        _tool_step("s3", "3 + 3", dependencies=["s2"]),  # transitively blocked
        _tool_step("s4", "4 + 4"),
    )
    result, _, records = _run(tmp_path, plan)
    assert result.status is RunStatus.COMPLETED
    steps = _steps(result)
    assert [steps[s]["status"] for s in ("s1", "s2", "s3", "s4")] == ["failed", "invalid", "invalid", "complete"]
    assert _invoked(records) == ["s1", "s4"]
    assert steps["s2"]["errors"] == ["dependencies not complete: s1"]
    assert steps["s3"]["errors"] == ["dependencies not complete: s2"]
    assert steps["s2"]["step_output"] is None and steps["s2"]["mode"] is None
    assert steps["s4"]["step_output"] == 8


def test_a_step_that_depends_on_a_blocked_step_is_invalid_and_never_asks_the_model(tmp_path):
    plan = _plan(
        _llm_step("s1", "Find the flights"),
        _llm_step("s2", "Compare their prices", dependencies=["s1"]),
        _tool_step("s3", "1 + 1", dependencies=["s1"]),
    )
    result, prompts, records = _run(tmp_path, plan, {"Find the flights": _answer("None found.", "BLOCKED")})
    steps = _steps(result)
    assert [steps[s]["status"] for s in ("s1", "s2", "s3")] == ["invalid", "invalid", "invalid"]
    assert list(prompts) == ["Find the flights"]
    assert _invoked(records) == []


@pytest.mark.parametrize("dependency", ["s2", "nowhere"], ids=["later-step", "missing-step"])
def test_a_dependency_that_is_not_complete_yet_blocks_the_step(tmp_path, dependency):
    plan = _plan(_tool_step("s1", "1 + 1", dependencies=[dependency]), _tool_step("s2", "2 + 2"))
    result, _, records = _run(tmp_path, plan)
    steps = _steps(result)
    assert steps["s1"]["status"] == "invalid" and steps["s1"]["step_output"] is None
    assert steps["s1"]["errors"] == [f"dependencies not complete: {dependency}"]
    assert steps["s2"]["status"] == "complete"
    assert _invoked(records) == ["s2"]  # s1 ran before its dependency, so never


def test_a_step_whose_dependencies_all_completed_runs(tmp_path):
    plan = _plan(
        _tool_step("s1", "5 + 10"),
        _tool_step("s2", "2 * 3"),
        _llm_step("s3", "Compare both", dependencies=["s1", "s2"]),
    )
    result, prompts, records = _run(tmp_path, plan, {"Compare both": _answer("15 > 6.")})
    assert [s["status"] for s in document(result)["plan"]["steps"]] == ["complete", "complete", "complete"]
    assert _invoked(records) == ["s1", "s2"] and list(prompts) == ["Compare both"]


def test_step_positions_are_one_based_unique_and_count_the_whole_plan(tmp_path):
    plan = _plan(_tool_step("s1", "1 + 1"), _tool_step("s2", "2 + 2"), _llm_step("s3", "Sum up"))
    result, _, records = _run(tmp_path, plan, {"Sum up": _answer("2 and 4.")})
    assert [(s["step_index"], s["total_steps"]) for s in document(result)["plan"]["steps"]] == [(1, 3), (2, 3), (3, 3)]
    assert [r["step_number"] for r in records if r["event"] == "cycle" and r.get("step_id")] == [1, 2, 3]
