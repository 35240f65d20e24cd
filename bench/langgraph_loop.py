"""LangGraph's plan-and-execute loop with a fake model, the yardstick for Aeon's per-step overhead (bench only).

The shape of LangGraph's plan-and-execute tutorial: a planner node asks the model for a plan, an executor node
runs one step (a LangChain tool for tool steps, the model for reasoning steps), a replanner node asks the model
whether to go on, and a conditional edge loops back until the plan is done. The model is LangChain's
FakeListChatModel (instant, canned answers), the tools are LangChain `@tool`s with pydantic-checked arguments,
state is checkpointed in memory (InMemorySaver), as a LangGraph user with resumable runs would. Needs the `[bench]`
extra (langgraph).
"""

from __future__ import annotations

import ast
import json
import operator
import time
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph


@tool
def calculator(expression: str) -> float:
    """Evaluate an arithmetic expression."""
    return float(eval(compile(ast.parse(expression, mode="eval"), "<expr>", "eval"), {"__builtins__": {}}))


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


TOOLS = {"calculator": calculator, "echo": echo}


class State(TypedDict):
    request: str
    plan: list[dict[str, Any]]
    past_steps: Annotated[list[tuple[str, Any]], operator.add]
    done: bool


def build(plan: list[dict[str, Any]]) -> Any:
    """The compiled graph; the fake model answers the plan, then "continue" after every step but the last."""
    replies = [json.dumps(plan)]
    for i, step in enumerate(plan):
        if not step.get("tool"):
            replies.append("an instant answer")
        replies.append("done" if i == len(plan) - 1 else "continue")
    model = FakeListChatModel(responses=replies)

    def planner(state: State) -> dict[str, Any]:
        return {"plan": json.loads(str(model.invoke(state["request"]).content))}

    def executor(state: State) -> dict[str, Any]:
        step = state["plan"][len(state["past_steps"])]
        if step.get("tool"):
            output = TOOLS[step["tool"]].invoke(step["args"])
        else:
            output = model.invoke(f"{step['description']}: {state['past_steps']}").content
        return {"past_steps": [(step["step_id"], output)]}

    def replanner(state: State) -> dict[str, Any]:
        verdict = model.invoke(f"done? {state['past_steps']}").content
        return {"done": verdict == "done" or len(state["past_steps"]) >= len(state["plan"])}

    graph = StateGraph(State)
    graph.add_node("planner", planner)
    graph.add_node("executor", executor)
    graph.add_node("replanner", replanner)
    graph.add_edge(START, "planner")
    graph.add_edge("planner", "executor")
    graph.add_edge("executor", "replanner")
    graph.add_conditional_edges("replanner", lambda s: END if s["done"] else "executor")
    return graph.compile(checkpointer=InMemorySaver())


def one_run(plan: list[dict[str, Any]], run_id: int) -> float:
    """Seconds for one whole run of `plan` (graph built outside the timing, as Aeon's wiring is)."""
    app = build(plan)
    config = {"configurable": {"thread_id": f"bench-{run_id}"}, "recursion_limit": 200}
    t0 = time.perf_counter()
    final = app.invoke({"request": "benchmark", "plan": [], "past_steps": [], "done": False}, config)
    elapsed = time.perf_counter() - t0
    assert len(final["past_steps"]) == len(plan), final
    return elapsed
