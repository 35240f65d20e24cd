"""Deterministic repair of plan answers whose content is all there, and never of answers that were cut off."""

from __future__ import annotations

import json
from pathlib import Path

from harness import SUM_STEP, plan_json, run

SAY_STEP = {"step_id": "s2", "description": "State the result of s1", "agent": "llm", "dependencies": ["s1"]}
PLAN = {"goal": "calculate the sum of 5 and 10", "steps": [SUM_STEP]}


def repairs(tmp_path: Path, answer: str, *more: str) -> tuple[int, int, int]:
    r = run(tmp_path, [answer, *more])
    assert r.result.status == "completed", r.result.error
    counts = r.result.counts
    return counts["deterministic_repairs"], counts["llm_repairs"], r.doc["budget"]["llm_calls"]


def test_a_plan_wrapped_in_one_outer_key_is_unwrapped_without_an_llm_call(tmp_path: Path) -> None:
    r = run(tmp_path, [json.dumps({"plan": PLAN})])

    assert r.result.status == "completed"
    assert (r.doc["counts"]["deterministic_repairs"], r.doc["counts"]["llm_repairs"]) == (1, 0)
    assert len(r.llm.requests) == 1
    assert r.doc["outputs"]["s1"]["output"] == 15


def test_numeric_step_ids_and_dependencies_become_text_without_an_llm_call(tmp_path: Path) -> None:
    steps = [dict(SUM_STEP, step_id=1), {"step_id": 2, "description": "Say it", "agent": "llm", "dependencies": [1]}]
    r = run(tmp_path, [json.dumps({"goal": "add", "steps": steps}), "The sum is 15."])

    assert r.result.status == "completed"
    assert (r.doc["counts"]["deterministic_repairs"], r.doc["counts"]["llm_repairs"]) == (1, 0)
    assert [(s["step_id"], s["dependencies"]) for s in r.doc["plan"]["steps"]] == [("1", []), ("2", ["1"])]
    assert r.doc["outputs"]["1"]["output"] == 15
    assert r.doc["outputs"]["2"]["status"] == "complete"


def test_tool_arguments_given_as_json_text_are_parsed_without_an_llm_call(tmp_path: Path) -> None:
    step = dict(SUM_STEP, args=json.dumps({"expression": "5+10"}))
    r = run(tmp_path, [json.dumps({"goal": "add", "steps": [step]})])

    assert r.result.status == "completed"
    assert (r.doc["counts"]["deterministic_repairs"], r.doc["counts"]["llm_repairs"]) == (1, 0)
    assert r.doc["plan"]["steps"][0]["args"] == {"expression": "5+10"}
    assert r.doc["outputs"]["s1"]["output"] == 15


def test_the_coercion_is_logged_as_a_deterministic_repair(tmp_path: Path) -> None:
    r = run(tmp_path, [json.dumps({"plan": {"goal": "add", "steps": [dict(SUM_STEP, step_id=1)]}})])

    actions = [x for x in r.records() if x["event"] == "supervisor_action"]
    assert [a["kind"] for a in actions] == ["deterministic_repair"]
    assert "plan" in actions[0]["detail"] and "step_id" in actions[0]["detail"]


def test_a_plan_cut_off_after_its_first_step_is_not_repaired_into_a_shorter_plan(tmp_path: Path) -> None:
    whole = plan_json(SUM_STEP, SAY_STEP)
    cut = whole[: whole.index('"State the result')]  # ends inside the second step
    r = run(tmp_path, [cut, whole, "The sum is 15."])

    assert r.result.status == "completed"
    assert [s["step_id"] for s in r.doc["plan"]["steps"]] == ["s1", "s2"]
    assert (r.doc["counts"]["deterministic_repairs"], r.doc["counts"]["llm_repairs"]) == (0, 1)
    repair_prompt = r.llm.requests[1].messages[-1].content
    assert "cut off" in repair_prompt


def test_an_answer_that_ends_inside_a_string_is_treated_as_cut_off(tmp_path: Path) -> None:
    whole = plan_json(SUM_STEP)
    cut = whole[: whole.index("5 + 10") + 3]  # '…"expression": "5 +'
    r = run(tmp_path, [cut, whole])

    assert r.result.status == "completed"
    assert (r.doc["counts"]["deterministic_repairs"], r.doc["counts"]["llm_repairs"]) == (0, 1)
    assert r.doc["plan"]["steps"][0]["args"] == {"expression": "5 + 10"}
