"""Threads that remember: a follow-up run of a thread sees its earlier requests and answers (and computes from
them), its memory is seeded from the thread's, the thread is bounded and deleted with everything it stored, and an
earlier answer that quoted untrusted data enters the next prompt fenced and makes the follow-up's plan untrusted."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import aeon
import aeon.adapters.durable.threads  # loaded once: forget_imports forgets what a test imports
from aeon.adapters.tools import tool
from aeon.testing import FunctionLLM, LLMCall

from cli_harness import invoke

pytestmark = pytest.mark.usefixtures("isolated_env", "forget_imports")

CONFIG: dict[str, Any] = {"run": {"evaluate": False}, "log": {"path": ""}}


def _plan(expression: str) -> str:
    step = {"step_id": "s1", "description": "compute", "tool": "calculator", "args": {"expression": expression}}
    return json.dumps({"goal": "compute", "steps": [step]})


class Planner:
    """A scripted planner: the first request is 6 * 7; a follow-up takes the last earlier answer in its prompt and
    divides it by 3. Every prompt it was asked is kept."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.model = FunctionLLM(self.answer)

    def answer(self, call: LLMCall) -> str:
        self.prompts.append(call.prompt)
        earlier = re.findall(r"Earlier answer: ([0-9.]+)", call.prompt)
        return _plan(f"{earlier[-1]} / 3" if earlier else "6 * 7")


def run(request: str, planner: Planner, **options: Any) -> aeon.RunResult:
    return aeon.run(request, model=planner.model, config=CONFIG, durable=False, **options)


def test_a_follow_up_sees_the_earlier_answer_and_computes_from_it() -> None:
    planner = Planner()
    first = run("multiply 6 by 7", planner, thread="calc")
    second = run("and now divide that by 3", planner, thread="calc")

    assert first.answer == "42" and "Conversation so far" not in planner.prompts[0]
    asked = planner.prompts[1]
    assert "Earlier request: multiply 6 by 7" in asked and "Earlier answer: 42" in asked
    assert asked.rindex("Request: and now divide that by 3") > asked.index("Earlier answer: 42")
    assert float(second.answer) == 14.0


def test_a_run_without_a_thread_asks_as_before_and_leaves_nothing() -> None:
    planner = Planner()
    run("multiply 6 by 7", planner, thread="calc")
    run("multiply 6 by 7", planner)
    assert "Conversation so far" not in planner.prompts[1]
    assert aeon_threads("show", "calc").count("request: multiply 6 by 7") == 1


def aeon_threads(*args: str, code: int = 0) -> str:
    done = invoke("threads", *args)
    assert done.exit_code == code, done.output
    return str(done.stdout)


def test_threads_are_listed_shown_and_deleted_with_everything_they_stored() -> None:
    planner = Planner()
    run("multiply 6 by 7", planner, thread="calc")
    run("and now divide that by 3", planner, thread="calc")
    run("multiply 6 by 7", planner, thread="other")

    listed = aeon_threads()
    assert re.search(r"calc\s+2 turn\(s\)", listed) and re.search(r"other\s+1 turn\(s\)", listed)
    shown = aeon_threads("show", "calc")
    assert "t1  completed" in shown and "answer:  42" in shown and "t2.s1 = " in shown
    document = json.loads(aeon_threads("show", "calc", "--json"))
    assert [t["request"] for t in document["turns"]] == ["multiply 6 by 7", "and now divide that by 3"]

    assert "deleted thread calc" in aeon_threads("delete", "calc")
    assert "calc" not in aeon_threads() and "other" in aeon_threads()
    assert "no thread named 'calc'" in invoke("threads", "show", "calc").output
    fresh = Planner()
    run("and now divide that by 3", fresh, thread="calc")  # nothing of the deleted thread is seen again
    assert "Earlier" not in fresh.prompts[0]


def test_the_prompt_holds_the_last_turns_only_each_cut() -> None:
    planner = Planner()
    for n in range(8):
        run(f"multiply 6 by 7 (turn {n}) " + "x" * 3000, planner, thread="long")
    asked = planner.prompts[-1]
    assert asked.count("Earlier request:") == 6 and "(turn 0)" not in asked and "(turn 1)" in asked
    assert "more characters cut" in asked and len(asked) < 6 * 2 * 2100 + 5000


def test_a_bad_thread_name_is_refused_before_the_run() -> None:
    with pytest.raises(aeon.InputError, match="thread name"):
        run("multiply 6 by 7", Planner(), thread="../etc")


@tool(trusted=False, effect="read")
def fetch_page(url: str) -> str:
    """Fetch a web page (untrusted text)."""
    return "42"


@tool(effect="external")
def send_money(amount: str) -> str:
    """Send money."""
    return f"sent {amount}"


def test_an_untrusted_earlier_answer_is_fenced_and_labels_the_follow_up() -> None:
    prompts: list[str] = []

    def answer(call: LLMCall) -> str:
        prompts.append(call.prompt)
        if len(prompts) == 1:
            step = {"step_id": "s1", "description": "read", "tool": "fetch_page", "args": {"url": "http://x"}}
        else:
            step = {"step_id": "s1", "description": "pay", "tool": "send_money", "args": {"amount": "42"}}
        return json.dumps({"goal": "g", "steps": [step]})

    options: dict[str, Any] = {"model": FunctionLLM(answer), "config": CONFIG, "durable": False, "thread": "web"}
    first = aeon.run("read the page", tools=[fetch_page, send_money], **options)
    assert first.untrusted_sources == ["tool:fetch_page"]
    second = aeon.run("pay what it says", tools=[fetch_page, send_money], **options)

    assert "<<<DATA from tool:fetch_page" in prompts[1]
    assert second.error is not None and second.error.code == "AEON.POLICY.REFUSED"  # its plan came from that data
    assert "written after reading untrusted data" in second.error.message
    step = second.plan.steps[0] if second.plan else None
    assert step is not None and not step.origin.trusted and step.origin.sources == ("tool:fetch_page",)
    assert "untrusted (from tool:fetch_page)" in aeon_threads("show", "web")


def test_a_streamed_run_of_a_thread_sees_it_and_leaves_its_turn() -> None:
    import asyncio

    planner = Planner()
    run("multiply 6 by 7", planner, thread="calc")

    async def streamed() -> aeon.RunResult:
        events = aeon.stream("and now divide that by 3", model=planner.model, config=CONFIG, thread="calc")
        ended = [e async for e in events if isinstance(e, aeon.events.RunEnded)]
        assert len(ended) == 1
        return ended[0].result

    assert float(asyncio.run(streamed()).answer) == 14.0
    assert "Earlier answer: 42" in planner.prompts[1]
    assert "t2  completed" in aeon_threads("show", "calc")


def test_with_evaluation_the_profile_plan_and_evaluation_prompts_show_the_conversation() -> None:
    asked: dict[str, list[str]] = {}
    profile = {
        "reasoning_depth": 1, "information_sufficiency": 1.0, "expected_tool_usage": "minimal",
        "output_breadth": "narrow", "confidence_requirement": "low", "raw_inference": "one call",
    }  # fmt: skip
    converged = {
        "issues": [],
        "completeness_score": 1.0,
        "coherence_score": 1.0,
        "consistent": True,
        "explanation": "ok",
    }

    def answer(call: LLMCall) -> str:
        asked.setdefault(call.schema_name, []).append(call.prompt)
        if call.schema_name == "evaluation":
            return json.dumps(converged)
        earlier = re.findall(r"Earlier answer: ([0-9.]+)", call.prompt)
        return json.dumps({"profile": profile, "plan": json.loads(_plan(f"{earlier[-1]} / 3" if earlier else "6 * 7"))})

    options: dict[str, Any] = {"model": FunctionLLM(answer), "config": {"log": {"path": ""}}, "durable": False}
    aeon.run("multiply 6 by 7", thread="judged", **options)
    second = aeon.run("and now divide that by 3", thread="judged", **options)

    assert second.status == "completed" and float(second.answer) == 14.0
    assert [("Earlier answer: 42" in p) for p in asked["profile_and_plan"]] == [False, True]
    assert [("Earlier answer: 42" in p) for p in asked["evaluation"]] == [False, True]


def test_a_refinement_of_a_follow_up_is_asked_with_the_conversation() -> None:
    asked: dict[str, list[str]] = {}
    profile = {
        "reasoning_depth": 3, "information_sufficiency": 1.0, "expected_tool_usage": "minimal",
        "output_breadth": "narrow", "confidence_requirement": "high", "raw_inference": "check it",
    }  # fmt: skip
    issue = {"severity": "HIGH", "type": "specificity", "description": "say the result"}
    unsure = {"issues": [issue], "completeness_score": 0.2, "coherence_score": 1.0, "consistent": True}
    unsure["explanation"] = "incomplete"
    step = {"step_id": "s2", "description": "State the result", "agent": "llm"}
    refine = {"actions": [{"action_type": "ADD", "target_step_id": "", "justification": "state", "new_step": step}]}

    def answer(call: LLMCall) -> str:
        asked.setdefault(call.schema_name, []).append(call.prompt)
        if call.schema_name == "evaluation":
            return json.dumps(unsure)
        if "refin" in call.schema_name:
            return json.dumps(refine)
        if call.schema_name == "step_result":
            return json.dumps({"answer": "14", "clarity_state": "CLEAR", "handoff_to_next": ""})
        earlier = re.findall(r"Earlier answer: ([0-9.]+)", call.prompt)
        return json.dumps({"profile": profile, "plan": json.loads(_plan(f"{earlier[-1]} / 3" if earlier else "6 * 7"))})

    options: dict[str, Any] = {"model": FunctionLLM(answer), "durable": False, "thread": "refined"}
    options["config"] = {"log": {"path": ""}, "run": {"ttl": 2}}
    aeon.run("multiply 6 by 7", **options)
    first_refinements = len(next(v for k, v in asked.items() if "refin" in k))
    aeon.run("and now divide that by 3", **options)
    refinements = next(v for k, v in asked.items() if "refin" in k)
    assert len(refinements) > first_refinements
    assert "Earlier answer: 42" in refinements[-1] and "Earlier answer" not in refinements[0]
