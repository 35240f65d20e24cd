"""Malformed planner answers (tests/corpus/planner_answers.yaml): the share Aeon recovers, and the share it recovers
without an LLM call.

Each case is one planner answer in a shape real models give. It is run through a whole run (aeon.testing, the
built-in tools and the corpus's; one pass without evaluation, or with it for an answer to the first pass's
`profile_and_plan` prompt) whose model gives that answer to the planning call and then
answers every repair as an oracle would: the plan the case means for a plan repair, that plan's step for a step
repair. A case ends
  deterministic  the run holds the intended plan after the planning call alone (no repair call)
  llm_repair     it holds the intended plan after one or more repair calls
  wrong          it holds another plan, or none (a deterministic repair that guessed, or a run that failed)
The recovered share counts deterministic and llm_repair, the zero-call share deterministic alone. A case whose
outcome is not the one the corpus expects is listed, and the exit code is 1.

Run: `.venv/bin/python bench/planner_answers.py [--quick] [--json]` (--quick: outcomes only; without it each case's
run is also timed, median of 5).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from aeon import testing
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.kernel.run import RunSettings
from aeon.domain.tools import ToolSpec

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus" / "planner_answers.yaml"
REPAIRS = ("plan", "profile_and_plan", "step")  # the schema names of the planning calls and the repairs
# The answers to the calls after planning: a profile for a `profile_and_plan` repair, a finished evaluation.
PROFILE = {"reasoning_depth": 1, "information_sufficiency": 1.0, "expected_tool_usage": "minimal",
           "output_breadth": "narrow", "confidence_requirement": "low", "raw_inference": "one tool call"}  # fmt: skip
VERDICT = json.dumps({"issues": [], "completeness_score": 1.0, "coherence_score": 1.0, "consistent": True,
                      "explanation": "done"})  # fmt: skip
_STEP_ID = re.compile(r'"step_id":\s*"([^"]+)"')
_REASONED = json.dumps({"answer": "done", "clarity_state": "CLEAR", "handoff_to_next": ""})


def load(path: Path = CORPUS) -> dict[str, Any]:
    return dict(yaml.safe_load(path.read_text(encoding="utf-8")))


def registry(tools: list[dict[str, Any]]) -> ToolRegistry:
    reg = ToolRegistry()
    register_builtins(reg)
    for t in tools:
        spec = ToolSpec(name=t["name"], description=t["description"], input_schema=t["input_schema"],
                        output_schema={"type": "string"})  # fmt: skip

        async def answer(**_: Any) -> str:
            return "ok"

        reg.register(spec, answer)
    return reg


def _oracle(case: dict[str, Any]) -> testing.FunctionLLM:
    """The case's answer first; then each repair answered as the intended plan (or step) says."""
    plan, first = case["plan"], [case["answer"]]
    steps = {s["step_id"]: s for s in plan["steps"]}

    def reply(call: testing.LLMCall) -> str:
        if first:
            return first.pop()
        if call.schema_name == "step":
            found = _STEP_ID.search(call.prompt)
            return json.dumps(steps.get(found.group(1) if found else "", {}))
        if call.schema_name == "plan":
            return json.dumps(plan)
        if call.schema_name == "profile_and_plan":
            return json.dumps({"profile": PROFILE, "plan": plan})
        if call.schema_name == "evaluation":
            return VERDICT
        return _REASONED  # an LLM step of the plan

    return testing.FunctionLLM(reply, name="oracle")


def _shape(plan: Any) -> Any:
    """What must match: the goal, and each step's id, description, tool, agent, arguments and dependencies."""
    if plan is None:
        return None
    return {
        "goal": plan["goal"],
        "steps": [
            {k: s.get(k) or None for k in ("step_id", "description", "tool", "agent", "args", "dependencies")}
            for s in plan["steps"]
        ],
    }


def run_case(case: dict[str, Any], tools: list[dict[str, Any]]) -> tuple[str, int, str]:
    """(outcome, repair calls, why it is wrong or '') for one case."""
    llm = _oracle(case)
    # the answer to the planning prompt is planned alone (one pass, no evaluation); to the first pass's profile and
    # plan prompt, in a run that evaluates
    evaluate = case.get("target", "plan") == "profile_and_plan"
    orch = testing.orchestrator(llm, run=RunSettings(evaluate=evaluate), tools=registry(tools))
    result = asyncio.run(orch.run(case["plan"]["goal"]))
    calls = sum(1 for c in llm.calls if c.schema_name in REPAIRS) - 1
    got = None if result.plan is None else json.loads(json.dumps(_plain(result.plan)))
    if _shape(got) != _shape(case["plan"]):
        why = result.error.message if result.error is not None else f"ended with {json.dumps(_shape(got))}"
        return "wrong", calls, why
    return ("deterministic" if calls == 0 else "llm_repair"), calls, ""


def _plain(plan: Any) -> dict[str, Any]:
    import msgspec

    return dict(msgspec.to_builtins(plan))


def measure(corpus: dict[str, Any], *, timed: bool = False) -> dict[str, Any]:
    rows = []
    for case in corpus["cases"]:
        outcome, calls, why = run_case(case, corpus.get("tools", []))
        row = {"name": case["name"], "expect": case["expect"], "outcome": outcome, "repair_calls": calls, "why": why}
        if timed:
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                run_case(case, corpus.get("tools", []))
                times.append(time.perf_counter() - t0)
            row["ms"] = round(statistics.median(times) * 1000, 1)
        rows.append(row)
    n = len(rows)
    zero = sum(r["outcome"] == "deterministic" for r in rows)
    recovered = sum(r["outcome"] != "wrong" for r in rows)
    return {
        "cases": n,
        "recovered": recovered,
        "zero_call": zero,
        "recovered_share": round(recovered / n, 3),
        "zero_call_share": round(zero / n, 3),
        "repair_calls": sum(r["repair_calls"] for r in rows),
        "unexpected": [r["name"] for r in rows if r["outcome"] != r["expect"]],
        "rows": rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="outcomes only, no timing")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    report = measure(load(args.corpus), timed=not args.quick)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        for r in report["rows"]:
            mark = " " if r["outcome"] == r["expect"] else "!"
            ms = f" {r['ms']:7.1f} ms" if "ms" in r else ""
            print(f"{mark} {r['name']:<52} {r['outcome']:<13} repairs={r['repair_calls']}{ms} {r['why'][:60]}")
        n = report["cases"]
        print(f"recovered {report['recovered']}/{n} ({report['recovered_share']:.0%}), "
              f"zero-call {report['zero_call']}/{n} ({report['zero_call_share']:.0%}), "
              f"repair calls {report['repair_calls']}")  # fmt: skip
        if report["unexpected"]:
            print(f"not as the corpus expects: {', '.join(report['unexpected'])}")
    return 1 if report["unexpected"] else 0


if __name__ == "__main__":
    sys.exit(main())
