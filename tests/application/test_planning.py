"""User story 1: a request becomes a declarative plan; the planner shows the model every tool."""

from __future__ import annotations

import json

from aeon.domain.progress import PlanMade, StepStarted

from harness import SUM_STEP, document, plan_json, run


def test_plan_has_goal_and_steps_with_ids_descriptions_and_statuses(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP)])
    plan = r.doc["plan"]
    assert plan is not None and plan["goal"] == "calculate the sum of 5 and 10"
    (step,) = plan["steps"]
    assert (step["step_id"], step["description"], step["status"]) == ("s1", "Add 5 and 10", "complete")
    assert step["step_index"] == 1 and step["total_steps"] == 1


def test_multi_step_plan_runs_in_the_planned_order(tmp_path):
    steps = [
        {"step_id": "a", "description": "first", "tool": "echo", "args": {"text": "one"}},
        {"step_id": "b", "description": "second", "tool": "echo", "args": {"text": "two"}},
        {"step_id": "c", "description": "third", "tool": "calculator", "args": {"expression": "2 * 3"}},
    ]
    r = run(tmp_path, [plan_json(*steps)])
    started = [e.step_id for e in r.progress.of(StepStarted)]
    assert started == ["a", "b", "c"]
    assert [s["step_output"] for s in document(r.result)["plan"]["steps"]] == ["one", "two", 6]


def test_the_plan_shown_in_progress_is_the_plan_as_made_not_as_it_later_ran(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP)])
    (made,) = r.progress.of(PlanMade)
    assert [(s.step_id, s.status, s.step_output) for s in made.plan.steps] == [("s1", "pending", None)]
    assert r.result.plan is not None and r.result.plan.steps[0].status == "complete"


def test_plan_prompt_lists_every_tool_with_schemas_and_an_example(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP)])
    prompt = "\n".join(m.content for m in r.llm.requests[0].messages)
    for name in ("echo", "calculator"):
        assert f"- {name}:" in prompt
    assert '"expression"' in prompt and "input_schema" in prompt and "output_schema" in prompt
    assert '{"tool": "calculator", "args": {"expression": "5 + 10"}}' in prompt


def test_every_llm_call_starts_with_the_same_preamble_so_prefix_caches_hit(tmp_path):
    reason = {"step_id": "s2", "description": "Explain", "agent": "llm"}
    r = run(tmp_path, ["{bad", plan_json(SUM_STEP, reason), "ok"])
    firsts = {req.messages[0].content for req in r.llm.requests}
    assert len(r.llm.requests) == 3 and len(firsts) == 1
    (preamble,) = firsts
    assert r.llm.requests[0].messages[0].role == "system" and "- calculator:" in preamble


def test_plan_prompt_ends_with_the_request_verbatim_after_the_static_prefix(tmp_path):
    request = "add   7 and 8, then tell me if it's odd"
    r = run(tmp_path, [plan_json(SUM_STEP, goal=request)], request=request)
    prompt = r.llm.requests[0].messages[-1].content
    assert prompt.endswith(f"Request: {request}\nPlan:")


def test_plan_request_constrains_output_to_registered_tools(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP)], max_plan_steps=4)
    schema = r.llm.requests[0].schema
    assert schema is not None
    items = schema["properties"]["steps"]
    assert items["maxItems"] == 4
    assert items["items"]["properties"]["tool"]["enum"] == ["calculator", "echo"]


def test_plan_text_is_pure_data_with_no_code_executed(tmp_path):
    sneaky = {"step_id": "s1", "description": "x", "tool": "calculator", "args": {"expression": "__import__('os')"}}
    r = run(tmp_path, [plan_json(sneaky)])
    step = document(r.result)["plan"]["steps"][0]
    assert step["status"] == "failed"
    assert any("not arithmetic" in e or "not supported" in e for e in step["errors"])
    assert json.loads(json.dumps(r.doc["plan"])) == r.doc["plan"]
