"""LangGraph's plan-and-execute loop with a fake model: the yardstick for Aeon's per-step overhead (bench only).

The shape of LangGraph's plan-and-execute tutorial: a planner node asks the model for a plan, an executor node runs
one step (the tool for tool steps, the model for reasoning steps), a replanner node asks the model whether to go
on, and a conditional edge loops back until the plan is done. Two variants:
- `lean`: the fake model and the tools are plain functions and nothing is checkpointed — the least LangGraph itself
  can do per step, so the strictest yardstick;
- `typical`: LangChain's FakeListChatModel, LangChain `@tool`s with pydantic-checked arguments and an in-memory
  checkpointer, as a LangGraph user with resumable runs would write it.
Needs the `[bench]` extra (langgraph). bench/overhead.py imports it and prints both beside Aeon's figures in one run;
alone it prints LangGraph's median µs per step for each variant.
Run: `.venv/bin/python bench/langgraph_loop.py [--runs N] [--quick]`.
"""

from __future__ import annotations

import argparse
import ast
import json
import operator
import statistics
import time
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

try:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
except ImportError:
    if __name__ != "__main__":
        raise  # bench/overhead.py leaves LangGraph out when the import fails
    print("skipped: langgraph is not installed (pip install -e '.[bench]')")
    raise SystemExit(0) from None


def _arithmetic(expression: str) -> float:
    return float(eval(compile(ast.parse(expression, mode="eval"), "<expr>", "eval"), {"__builtins__": {}}))


@tool
def calculator(expression: str) -> float:
    """Evaluate an arithmetic expression."""
    return _arithmetic(expression)


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


class State(TypedDict):
    request: str
    plan: list[dict[str, Any]]
    past_steps: Annotated[list[tuple[str, Any]], operator.add]
    done: bool


def _replies(plan: list[dict[str, Any]]) -> list[str]:
    replies = [json.dumps(plan)]
    for i, step in enumerate(plan):
        if not step.get("tool"):
            replies.append("an instant answer")
        replies.append("done" if i == len(plan) - 1 else "continue")
    return replies


def build(plan: list[dict[str, Any]], variant: str = "lean") -> Any:
    """The compiled graph; the fake model answers the plan, then "continue" after every step but the last."""
    if variant == "typical":
        chat = FakeListChatModel(responses=_replies(plan))
        model: Callable[[str], str] = lambda prompt: str(chat.invoke(prompt).content)  # noqa: E731
        tools: dict[str, Callable[[dict[str, Any]], Any]] = {"calculator": calculator.invoke, "echo": echo.invoke}
    else:
        answers = iter(_replies(plan))
        model = lambda prompt: next(answers)  # noqa: E731
        tools = {"calculator": lambda a: _arithmetic(a["expression"]), "echo": lambda a: a["text"]}

    def planner(state: State) -> dict[str, Any]:
        return {"plan": json.loads(model(state["request"]))}

    def executor(state: State) -> dict[str, Any]:
        step = state["plan"][len(state["past_steps"])]
        output = tools[step["tool"]](step["args"]) if step.get("tool") else model(step["description"])
        return {"past_steps": [(step["step_id"], output)]}

    def replanner(state: State) -> dict[str, Any]:
        verdict = model(f"done? {state['past_steps']}")
        return {"done": verdict == "done" or len(state["past_steps"]) >= len(state["plan"])}

    graph = StateGraph(State)
    graph.add_node("planner", planner)
    graph.add_node("executor", executor)
    graph.add_node("replanner", replanner)
    graph.add_edge(START, "planner")
    graph.add_edge("planner", "executor")
    graph.add_edge("executor", "replanner")
    graph.add_conditional_edges("replanner", lambda s: END if s["done"] else "executor")
    return graph.compile(checkpointer=InMemorySaver() if variant == "typical" else None)


def one_run(plan: list[dict[str, Any]], run_id: int, variant: str = "lean") -> float:
    """Seconds for one whole run of `plan` (the graph is built outside the timing, as Aeon's wiring is)."""
    app = build(plan, variant)
    config = {"configurable": {"thread_id": f"bench-{run_id}"}, "recursion_limit": 200}
    t0 = time.perf_counter()
    final = app.invoke({"request": "benchmark", "plan": [], "past_steps": [], "done": False}, config)
    elapsed = time.perf_counter() - t0
    assert len(final["past_steps"]) == len(plan), final
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="a few runs: checks the bench still runs (CI)")
    args = ap.parse_args()
    if args.quick:
        args.runs = 3
    from overhead import plan_steps  # bench/overhead.py's plan (this script's folder is on sys.path)

    plan = plan_steps(args.steps)
    print(f"runs: {args.runs} x {args.steps}-step plan (fake model, instant tools)")
    for variant in ("lean", "typical"):
        per_step = [one_run(plan, i, variant) / args.steps * 1e6 for i in range(args.runs)]
        print(f"LangGraph plan-and-execute, {variant}: median {statistics.median(per_step):9.1f} µs/step")


if __name__ == "__main__":
    main()
