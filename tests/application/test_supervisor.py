"""User story 3: the supervisor repairs deterministically first, then with at most two LLM calls."""

from __future__ import annotations

import json

import pytest

from harness import SUM_STEP, plan_json, run

FENCED_SLOPPY = """Sure! Here is the plan:
```json
{'goal': 'calculate the sum of 5 and 10', 'steps': [{'step_id': 's1', 'description': 'Add 5 and 10',
  'tool': 'calculator', 'args': {'expression': '5 + 10'},},],}
```
Hope this helps."""


def test_fenced_single_quoted_trailing_comma_plan_costs_no_llm_repair(tmp_path):
    r = run(tmp_path, [FENCED_SLOPPY])
    assert r.result.status == "completed"
    assert r.doc["counts"]["llm_repairs"] == 0
    assert r.doc["counts"]["deterministic_repairs"] == 1
    assert len(r.llm.requests) == 1
    assert r.doc["outputs"]["s1"]["output"] == 15


def test_python_literals_are_converted_not_stringified(tmp_path):
    raw = (
        "{'goal': 'g', 'steps': [{'step_id': 's1', 'description': 'say None', 'tool': 'echo', "
        "'args': {'text': 'None'}, 'agent': None}]}"
    )
    r = run(tmp_path, [raw])
    step = r.doc["plan"]["steps"][0]
    assert step["step_output"] == "None"  # the string stays a string
    assert step["agent"] is None  # the literal None became null, not the string "None"


def test_plan_missing_steps_costs_exactly_one_llm_repair_that_sees_the_errors(tmp_path):
    r = run(tmp_path, ['{"goal": "calculate the sum of 5 and 10"}', plan_json(SUM_STEP)])
    assert r.result.status == "completed"
    assert r.doc["counts"]["llm_repairs"] == 1
    repair_prompt = r.llm.requests[1].messages[-1].content
    assert "'steps' is a required property" in repair_prompt
    assert '{"goal": "calculate the sum of 5 and 10"}' in repair_prompt
    assert "- calculator:" in r.llm.requests[1].messages[0].content  # the repair call sees the tools too


def test_three_bad_answers_end_unrecoverable_after_exactly_two_repairs(tmp_path):
    r = run(tmp_path, ["no plan here", "still nothing", '{"goal": 1}'])
    assert r.result.status == "error"
    # the last answer parses but is no plan: structurally invalid, which the A->B contract does not retry
    assert r.result.error is not None and r.result.error.code == "AEON.PHASE_TRANSITION.INVALID_PLAN_STRUCTURE"
    assert r.doc["counts"]["llm_repairs"] == 2
    assert len(r.llm.requests) == 3
    records = r.records()
    assert records[-1]["event"] == "run_end" and records[-1]["status"] == "error"
    kinds = [a["kind"] for a in records if a["event"] == "supervisor_action" for a in [a]]
    assert kinds == ["llm_repair", "llm_repair", "unrecoverable"]


def test_plans_that_never_parse_get_one_phase_level_retry(tmp_path):
    r = run(tmp_path, ["no", "no", "no", "no", "no", "no"])
    assert r.result.error is not None and r.result.error.code == "AEON.PHASE_TRANSITION.MALFORMED_PLAN"
    assert r.doc["counts"]["llm_repairs"] == 4 and len(r.llm.requests) == 6
    retries = [x for x in r.records() if x["event"] == "phase_retry"]
    assert [x["error_code"] for x in retries] == ["AEON.PHASE_TRANSITION.MALFORMED_PLAN"]


def test_supervisor_actions_are_recorded_in_the_planning_cycle(tmp_path):
    r = run(tmp_path, ['{"goal": "x"}', plan_json(SUM_STEP)])
    planning = r.cycles()[0]
    assert planning["step_number"] == 0
    assert [a["kind"] for a in planning["supervisor_actions"]] == ["llm_repair"]
    assert planning["llm_output"] == ['{"goal": "x"}', plan_json(SUM_STEP)]
    assert planning["errors"] and "steps" in planning["errors"][0]


def test_duplicate_step_ids_are_routed_to_repair(tmp_path):
    dup = plan_json(SUM_STEP, dict(SUM_STEP))
    r = run(tmp_path, [dup, plan_json(SUM_STEP)])
    assert r.doc["counts"]["llm_repairs"] == 1
    assert "duplicate step_id 's1'" in r.llm.requests[1].messages[-1].content


@pytest.mark.parametrize("answer", ['{"step_id": "s1", "description": "d", "tool": "adder", "args": {}}', "nope"])
def test_step_repair_never_accepts_an_unregistered_tool(tmp_path, answer):
    missing = {"step_id": "s1", "description": "Add 5 and 10", "tool": "adder", "args": {"a": 5, "b": 10}}
    r = run(tmp_path, [plan_json(missing), answer, answer, "15"])
    step = r.doc["plan"]["steps"][0]
    assert step["tool"] == "adder" and step["mode"] == "fallback"
    assert r.doc["counts"]["tool_repairs"] == 0
    assert r.doc["counts"]["fallbacks"] == 1


def test_repair_prompt_for_a_missing_tool_carries_tools_step_and_goal(tmp_path):
    missing = {"step_id": "s1", "description": "Add 5 and 10", "tool": "adder", "args": {"a": 5, "b": 10}}
    fixed = json.dumps(
        {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expression": "5 + 10"}}
    )
    r = run(tmp_path, [plan_json(missing), fixed])
    prompt = r.llm.requests[1].messages[-1].content
    assert "Goal: calculate the sum of 5 and 10" in prompt
    assert '"tool": "adder"' in prompt and "Tool 'adder' not found in registry" in prompt
    catalogue = r.llm.requests[1].messages[0].content
    assert "- calculator:" in catalogue and "- echo:" in catalogue
    assert r.llm.requests[1].schema["properties"]["tool"]["enum"] == ["calculator", "echo"]
