"""User stories 2, 4 and 8: ordered execution with deterministic statuses, tool/LLM/repair/fallback steps."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.decorator import tool
from aeon.adapters.tools.registry import ToolRegistry
from aeon.domain.plan import Plan, PlanStep
from aeon.domain.progress import StepEnded, StepRepaired, StepStarted, Warned
from aeon.domain.tools import ToolResult, ToolSpec

from harness import SUM_STEP, document, plan_json, run

REASON = {"step_id": "s2", "description": "Explain the result of s1", "agent": "llm"}
ADDER = {"step_id": "s1", "description": "Add 5 and 10", "tool": "adder", "args": {"a": 5, "b": 10}}
FIXED = json.dumps(
    {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expression": "5 + 10"}}
)


def test_each_step_goes_pending_running_complete_in_order(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP, REASON), "It is 15."])
    seq = [
        (type(e), e.step_id, e.status if isinstance(e, StepEnded) else None)
        for e in r.progress.events
        if isinstance(e, StepStarted | StepEnded)
    ]
    assert seq == [
        (StepStarted, "s1", None),
        (StepEnded, "s1", "complete"),
        (StepStarted, "s2", None),
        (StepEnded, "s2", "complete"),
    ]
    # the plan snapshot of each cycle shows every step's status at that moment
    cycles = r.cycles()
    assert [s["status"] for s in cycles[0]["plan_state"]["steps"]] == ["pending", "pending"]
    assert [s["status"] for s in cycles[1]["plan_state"]["steps"]] == ["complete", "pending"]
    assert [s["status"] for s in cycles[2]["plan_state"]["steps"]] == ["complete", "complete"]


def test_a_failing_tool_fails_its_step_and_execution_continues(tmp_path):
    bad = {"step_id": "s1", "description": "Divide", "tool": "calculator", "args": {"expression": "1 / 0"}}
    r = run(tmp_path, [plan_json(bad, REASON), "Division failed."])
    s1, s2 = document(r.result)["plan"]["steps"]
    assert s1["status"] == "failed" and any("division by zero" in e.lower() for e in s1["errors"])
    assert s2["status"] == "complete"
    assert "division by zero" in r.cycles()[1]["errors"][0].lower()
    # the error reaches the next LLM cycle through memory
    assert "division by zero" in r.llm.requests[1].messages[-1].content.lower()


def test_a_tool_that_raises_is_a_failed_step_not_a_crash(tmp_path):
    @tool
    def explode(text: str) -> str:
        """Always fails."""
        raise RuntimeError("kaboom")

    reg = ToolRegistry()
    register_builtins(reg)
    reg.register_function(explode)
    step = {"step_id": "s1", "description": "boom", "tool": "explode", "args": {"text": "x"}}
    r = run(tmp_path, [plan_json(step, dict(SUM_STEP, step_id="s2"))], tools=reg)
    assert [s["status"] for s in document(r.result)["plan"]["steps"]] == ["failed", "complete"]
    assert r.result.status == "completed"
    assert r.cycles()[1]["tool_calls"][0]["error"].startswith("RuntimeError: kaboom")


def test_tool_step_validates_invokes_and_stores_result_in_memory(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP)])
    assert asyncio.run(r.memory.read("step:s1")) == {"status": "complete", "output": 15}
    call = r.cycles()[1]["tool_calls"][0]
    assert call == {
        "step_id": "s1",
        "tool": "calculator",
        "args": {"expression": "5 + 10"},
        "output": 15,
        "error": None,
        "notes": [],  # nothing in the output had to be recorded as text
        "supplied_by": None,  # the tool ran (no output given in its place)
    }


def test_llm_step_prompt_includes_memory_of_earlier_results(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP, REASON), "The sum is 15."])
    prompt = r.llm.requests[1].messages[-1].content
    assert "s1 = " in prompt and "15" in prompt
    assert "Step: Explain the result of s1" in prompt
    assert asyncio.run(r.memory.read("step:s2"))["output"] == "The sum is 15."


def test_invalid_tool_arguments_are_routed_to_the_supervisor(tmp_path):
    wrong = {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expr": "5+10"}}
    r = run(tmp_path, [plan_json(wrong), FIXED])
    step = document(r.result)["plan"]["steps"][0]
    assert step["mode"] == "repaired" and step["step_output"] == 15
    assert "args for tool 'calculator' invalid" in r.llm.requests[1].messages[-1].content


def test_missing_tool_is_flagged_then_repaired_in_place(tmp_path):
    r = run(tmp_path, [plan_json(ADDER, REASON), FIXED, "It is 15."])
    warnings = [e.message for e in r.progress.of(Warned)]
    assert any("Tool 'adder' not found in registry" in w for w in warnings)
    s1, s2 = document(r.result)["plan"]["steps"]
    assert (s1["step_id"], s1["tool"], s1["mode"], s1["step_output"]) == ("s1", "calculator", "repaired", 15)
    assert s1["step_index"] == 1 and s2["step_id"] == "s2"
    assert r.progress.of(StepRepaired)


def test_unrepairable_missing_tool_falls_back_to_llm_with_the_description_as_prompt(tmp_path):
    r = run(tmp_path, [plan_json(ADDER), "not json", "{}", "5 plus 10 is 15"])
    step = document(r.result)["plan"]["steps"][0]
    assert step["mode"] == "fallback" and step["status"] == "complete"
    assert step["step_output"] == "5 plus 10 is 15"
    assert "Step: Add 5 and 10" in r.llm.requests[3].messages[-1].content
    assert any(rec["event"] == "fallback" for rec in r.records())
    assert asyncio.run(r.memory.read("step:s1"))["output"] == "5 plus 10 is 15"


def test_step_with_neither_tool_nor_agent_is_a_missing_tool_step(tmp_path):
    bare = {"step_id": "s1", "description": "Add 5 and 10"}
    r = run(tmp_path, [plan_json(bare), FIXED])
    assert document(r.result)["plan"]["steps"][0]["mode"] == "repaired"


def test_tool_wins_when_a_step_has_both_tool_and_agent(tmp_path):
    both = dict(SUM_STEP, agent="llm")
    r = run(tmp_path, [plan_json(both)])
    assert document(r.result)["plan"]["steps"][0]["mode"] == "tool"
    assert len(r.llm.requests) == 1  # no reasoning call


class VanishingTools:
    """A registry whose 'calculator' disappears after planning, as if unregistered mid-run."""

    def __init__(self) -> None:
        self._inner = ToolRegistry()
        register_builtins(self._inner)
        self.planning_done = False

    def list(self) -> list[ToolSpec]:
        return self._inner.list()

    def get(self, name: str) -> ToolSpec | None:
        if self.planning_done and name == "calculator":
            return None
        return self._inner.get(name)

    async def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float | None = None) -> ToolResult:
        return await self._inner.invoke(name, args)


def test_tool_unregistered_during_execution_is_handled_as_missing(tmp_path):
    tools = VanishingTools()
    tools.planning_done = True
    plan = Plan(
        goal="add",
        steps=[PlanStep(step_id="s1", description="Add 5 and 10", tool="calculator", args={"expression": "5 + 10"})],
    )
    r = run(tmp_path, ["no", "no", "fifteen"], plan=plan, tools=tools)  # type: ignore[arg-type]
    step = document(r.result)["plan"]["steps"][0]
    assert step["mode"] == "fallback" and step["step_output"] == "fifteen"


def test_plan_object_identity_is_kept_through_execution_and_repair(tmp_path):
    plan = Plan(
        goal="calculate the sum of 5 and 10",
        steps=[PlanStep(step_id="s1", description="Add 5 and 10", tool="adder", args={})],
    )
    steps_list = plan.steps
    r = run(tmp_path, [FIXED], plan=plan)
    assert r.result.status == "completed"
    assert plan.steps is steps_list  # same Plan, same list: the repaired step was swapped in place
    assert plan.steps[0].tool == "calculator" and plan.steps[0].step_output == 15
