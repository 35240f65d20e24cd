"""User story 6: TTL and the LLM-call cap end a run with a structured TTL-expired response, never mid-tool."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from aeon import testing
from aeon.adapters.tools import tool
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.kernel.run import RunSettings
from aeon.domain.plan import Plan, PlanStep
from aeon.domain.tools import ToolResult, ToolSpec

from harness import SUM_STEP, FakeClock, document, plan_json, run
from multipass import first, profile, verdict

REASON = {"step_id": "s2", "description": "Explain the result of s1", "agent": "llm"}


def test_ttl_zero_expires_at_the_boundary_before_anything_runs(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP)], ttl=0)
    assert r.result.status == "ttl_expired"
    t = r.result.ttl_expiration
    assert t is not None and t.expiration_type == "phase_boundary" and t.ttl_remaining == 0
    assert t.converged is False and t.result_type == "ttl_expired" and t.plan_state is None
    assert r.llm.requests == []


def test_call_cap_stops_before_the_next_step_and_keeps_results_so_far(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP, REASON), "never used"], max_llm_calls=1)
    assert r.result.status == "ttl_expired"
    t = r.result.ttl_expiration
    assert t is not None and t.expiration_type == "mid_phase" and t.phase == "C"
    assert t.execution_results["s1"].output == 15 and t.execution_results["s1"].status == "complete"
    assert t.execution_results["s2"].status == "pending"
    assert "max_llm_calls (1)" in t.message
    assert len(r.llm.requests) == 1


def test_call_cap_reached_during_repair_expires_mid_phase(tmp_path):
    r = run(tmp_path, ["garbage", "more garbage", plan_json(SUM_STEP)], max_llm_calls=2)
    assert r.result.status == "ttl_expired"
    assert r.result.ttl_expiration.expiration_type == "mid_phase"
    assert r.result.ttl_expiration.phase == "A"
    assert len(r.llm.requests) == 2


def test_ttl_counts_passes_and_is_decremented_once_for_the_pass(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP, REASON), "ok"], ttl=2)
    assert document(r.result)["budget"]["ttl_remaining"] == 1
    assert [c["ttl_remaining"] for c in r.cycles()] == [2, 2, 2]


def test_ttl_one_lets_the_pass_finish(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP, REASON), "ok"], ttl=1)
    assert r.result.status == "completed" and document(r.result)["budget"]["ttl_remaining"] == 0


class SlowTool:
    """A tool that takes ten (fake) seconds; the clock moves while it runs."""

    def __init__(self, clock: FakeClock) -> None:
        self.inner = ToolRegistry()
        register_builtins(self.inner)
        self.clock = clock
        self.finished: list[str] = []

    def list(self) -> list[ToolSpec]:
        return self.inner.list()

    def get(self, name: str) -> ToolSpec | None:
        return self.inner.get(name)

    async def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float | None = None) -> ToolResult:
        self.clock.advance(10.0)
        result = await self.inner.invoke(name, args)
        self.finished.append(name)
        return result


def test_a_running_tool_is_never_interrupted_by_a_cap(tmp_path):
    clock = FakeClock()
    tools = SlowTool(clock)
    plan = Plan(
        goal="g",
        steps=[
            PlanStep(step_id="s1", description="d", tool="echo", args={"text": "a"}),
            PlanStep(step_id="s2", description="d", tool="echo", args={"text": "b"}),
        ],
    )
    r = run(tmp_path, [], plan=plan, tools=tools, clock=clock, max_seconds=5.0)  # type: ignore[arg-type]
    # the first tool overruns the 5 s cap but finishes; the run stops at the next step boundary
    assert tools.finished == ["echo"]
    assert r.result.status == "ttl_expired"
    assert [s["status"] for s in document(r.result)["plan"]["steps"]] == ["complete", "pending"]
    assert "max_seconds (5)" in r.result.ttl_expiration.message


@tool
async def hang() -> str:
    """Wait for ever."""
    await asyncio.Event().wait()
    return "never"


def test_a_tool_cut_by_max_seconds_ends_the_run_expired_with_that_cap_even_as_the_last_step(tmp_path):
    registry = ToolRegistry()
    register_builtins(registry)
    registry.register_function(hang)
    plan = Plan(
        goal="g",
        steps=[
            PlanStep(step_id="s1", description="d", tool="echo", args={"text": "a"}),
            PlanStep(step_id="s2", description="d", tool="hang", args={}),
        ],
    )
    # a real 0.05 s cap: the registry abandons the tool at the run's deadline (no later step checks the caps)
    r = run(tmp_path, [], plan=plan, tools=registry, max_seconds=0.05)
    assert r.result.status == "ttl_expired"
    t = r.result.ttl_expiration
    assert t is not None and t.cap == "max_seconds" and t.expiration_type == "mid_phase"
    assert "max_seconds (0.05) ran out during tool 'hang' of step s2" in t.message
    assert [s["status"] for s in document(r.result)["plan"]["steps"]] == ["complete", "failed"]
    records = r.records()
    hung = next(c for c in records if c["event"] == "tool_call" and c["step_id"] == "s2")
    assert "the run's time cap" in hung["error"]  # the call itself is on the record, with why it ended
    assert records[-1]["event"] == "run_end" and records[-1]["status"] == "ttl_expired"


@pytest.mark.parametrize("slow", ["profile_and_plan", "step_result", "evaluation"])
def test_a_run_cut_by_max_seconds_during_any_llm_call_ends_expired_with_that_cap(slow: str) -> None:
    texts = {
        "profile_and_plan": first(profile(), plan_json(SUM_STEP, REASON)),
        "step_result": '{"answer": "15", "clarity_state": "CLEAR", "handoff_to_next": ""}',
        "evaluation": verdict(True),
    }
    clock = FakeClock()

    def answer(call: testing.LLMCall) -> str:
        if call.schema_name == slow:
            clock.advance(10.0)  # this call takes 10 s of the 5 s cap
        return texts[call.schema_name]

    orch = testing.orchestrator(testing.FunctionLLM(answer), run=RunSettings(max_seconds=5.0, ttl=1), clock=clock)
    result = asyncio.run(orch.run("calculate the sum of 5 and 10"))
    assert result.status == "ttl_expired"
    assert result.ttl_expiration is not None and result.ttl_expiration.cap == "max_seconds"


def test_call_cap_still_lets_tool_steps_run_but_not_llm_steps(tmp_path):
    plan = Plan(
        goal="g",
        steps=[
            PlanStep(step_id="s1", description="d", tool="echo", args={"text": "a"}),
            PlanStep(step_id="s2", description="d", agent="llm"),
        ],
    )
    r = run(tmp_path, ["unused"], plan=plan, max_llm_calls=0)
    assert [s["status"] for s in document(r.result)["plan"]["steps"]] == ["complete", "pending"]
    assert r.result.status == "ttl_expired" and r.llm.requests == []


def test_expiry_saves_state_and_is_logged(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP, REASON)], max_llm_calls=1)
    records = r.records()
    expired = [x for x in records if x["event"] == "ttl_expired"]
    assert len(expired) == 1 and expired[0]["plan_state"]["steps"][0]["step_output"] == 15
    assert records[-1]["event"] == "run_end" and records[-1]["status"] == "ttl_expired"


def test_token_cap_is_checked_after_every_llm_call(tmp_path):
    r = run(tmp_path, [plan_json(SUM_STEP, REASON), "x" * 4000], max_tokens=300)
    assert r.result.status == "ttl_expired"
    assert "max_tokens (300)" in r.result.ttl_expiration.message


def test_a_truncated_answer_still_spends_its_tokens_against_the_budget(tmp_path):
    import asyncio

    from aeon import testing
    from aeon.application.errors import LLMTruncated
    from aeon.application.kernel.run import RunSettings
    from aeon.domain.llm import Usage

    cut_off = LLMTruncated(
        "answer truncated at the token limit (max_tokens=512)", usage=Usage(prompt_tokens=300, completion_tokens=512)
    )
    orch = testing.orchestrator(testing.FunctionLLM(lambda call: cut_off), run=RunSettings(evaluate=False))
    result = asyncio.run(orch.run("calculate the sum of 5 and 10"))
    assert result.status == "error"
    assert document(result)["budget"]["llm_calls"] >= 1
    assert document(result)["budget"]["completion_tokens"] == 512 * document(result)["budget"]["llm_calls"]
    assert document(result)["budget"]["prompt_tokens"] == 300 * document(result)["budget"]["llm_calls"]
