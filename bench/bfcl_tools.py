"""Third-party stateful tool APIs through Aeon: BFCL's multi-turn API classes (MessageAPI, TravelAPI, the file system
…, from PyPI `bfcl-eval`), every public method a tool by the same derivation as `@tool`, and the ground-truth calls
of its multi-turn tasks replayed as hand-written plans through `aeon.run`. Counts the tasks with a failed step and
why, and checks each step's output against the same call made directly on a fresh instance (the reference).

These methods annotate their returns loosely (`send_message -> Dict[str, Union[str, bool]]` returns an int id too,
`compute_exchange_rate -> float` returns a dict): under `tools.output_check: fail` (what every run did before the
check became a warning) their steps fail after their effect happened; under `warn`, the default, they complete with
a warning. Only the API classes and their data are used, so `pip install --no-deps bfcl-eval mpmath` is enough (the
package's own dependencies are for its model-evaluation harness). Without it the bench says so and exits 0.
Run: `.venv/bin/python bench/bfcl_tools.py [--tasks N] [--output-check warn|fail|off|both] [--quick]`.
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib
import importlib.util
import inspect
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aeon
from aeon import testing
from aeon.adapters.tools.jsonable import to_json_data

PACKAGE = "bfcl_eval"
DATA = "BFCL_v4_multi_turn_base.json"


def load_tasks(count: int) -> list[dict[str, Any]]:
    """The first `count` multi-turn base tasks, each with its ground-truth calls (a list of turns)."""
    root = Path(importlib.import_module(PACKAGE).__file__ or "").parent / "data"
    tasks = [json.loads(line) for line in (root / DATA).read_text().splitlines()[:count]]
    answers = {
        row["id"]: row["ground_truth"]
        for row in map(json.loads, (root / "possible_answer" / DATA).read_text().splitlines())
    }
    for task in tasks:
        task["ground_truth"] = answers[task["id"]]
    return tasks


def instances(task: dict[str, Any]) -> dict[str, Any]:
    """A fresh instance of each API class the task involves, loaded with the task's initial state."""
    config = importlib.import_module(f"{PACKAGE}.constants.executable_backend_config")
    made = {}
    for name in task["involved_classes"]:
        obj = getattr(importlib.import_module(config.CLASS_FILE_PATH_MAPPING[name]), name)()
        if name not in config.STATELESS_CLASSES:
            obj._load_scenario(copy.deepcopy(task["initial_config"].get(name, {})), long_context=False)
        made[name] = obj
    return made


def methods(objs: dict[str, Any]) -> dict[str, Any]:
    """Public bound methods by name; a later class's method of the same name wins, as in BFCL's own executor."""
    found = {}
    for obj in objs.values():
        for name, method in inspect.getmembers(obj, inspect.ismethod):
            if not name.startswith("_"):
                found[name] = method
    return found


def parse_call(text: str, known: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """`name(a, b=1)` as the tool name and its arguments by parameter name."""
    call = ast.parse(text, mode="eval").body
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name), text
    args = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg is not None}
    params = list(inspect.signature(known[call.func.id]).parameters)
    args.update({params[i]: ast.literal_eval(value) for i, value in enumerate(call.args)})
    return call.func.id, args


def reference(task: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """What each call returns made directly on fresh instances, as JSON data (as Aeon records it)."""
    known = methods(instances(task))
    outputs = []
    for name, args in calls:
        try:
            outputs.append(to_json_data(known[name](**copy.deepcopy(args)))[0])
        except Exception as exc:
            outputs.append(f"error: {type(exc).__name__}")
    return outputs


def run_task(task: dict[str, Any], check: str) -> dict[str, Any]:
    """The task's ground-truth calls as one plan through aeon.run; what happened to each step."""
    objs = instances(task)
    known = methods(objs)
    calls = [parse_call(text, known) for turn in task["ground_truth"] for text in turn]
    used = {name for name, _ in calls}
    tools = [aeon.tool(known[name]) for name in sorted(used)]
    steps = [
        {"step_id": f"s{i}", "description": f"call {name}", "tool": name, "args": args}
        for i, (name, args) in enumerate(calls, 1)
    ]
    config: dict[str, Any] = {"run": {"evaluate": False}, "tools": {"builtins": False}}
    if check != "default":
        config["tools"]["output_check"] = check
    result = aeon.run(
        task["question"][0][0]["content"][:200] or task["id"],
        tools=tools,
        plan={"goal": task["id"], "steps": steps},
        config=config,
        model=testing.answers(),
        log_file=False,
        durable=False,
    )
    expected = reference(task, calls)
    out: dict[str, Any] = {"failed": [], "warned": 0, "differs": 0, "steps": len(steps)}
    for i, (name, _) in enumerate(calls, 1):
        step = result.outputs[f"s{i}"]
        if step.status != "complete":
            why = "output check" if any("does not match" in e for e in step.errors) else "other"
            out["failed"].append((name, why))
        elif step.output != expected[i - 1]:
            out["differs"] += 1
        out["warned"] += sum("does not match" in note for note in step.notes)
    return out


def measure(tasks: list[dict[str, Any]], check: str) -> dict[str, Any]:
    began = time.perf_counter()
    results = [run_task(task, check) for task in tasks]
    causes = Counter(why for r in results for _, why in r["failed"])
    tools = Counter(name for r in results for name, why in r["failed"] if why == "output check")
    return {
        "output_check": check,
        "tasks": len(tasks),
        "steps": sum(r["steps"] for r in results),
        "tasks_with_a_failed_step": sum(bool(r["failed"]) for r in results),
        "tasks_failed_by_the_output_check": sum(any(why == "output check" for _, why in r["failed"]) for r in results),
        "failed_steps": dict(causes),
        "steps_warned": sum(r["warned"] for r in results),
        "completed_steps_differing_from_reference": sum(r["differs"] for r in results),
        "tools_failing_the_output_check": dict(tools.most_common()),
        "seconds": round(time.perf_counter() - began, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=200, help="how many multi-turn base tasks (200 in all)")
    parser.add_argument("--output-check", default="both", choices=["warn", "fail", "off", "both", "default"])
    parser.add_argument("--quick", action="store_true", help="10 tasks, both settings")
    args = parser.parse_args()
    if importlib.util.find_spec(PACKAGE) is None:
        print(f"skipped: {PACKAGE} is not installed (pip install --no-deps bfcl-eval mpmath)")
        return
    tasks = load_tasks(10 if args.quick else args.tasks)
    checks = ["fail", "warn"] if args.output_check == "both" else [args.output_check]
    for check in checks:
        print(json.dumps(measure(tasks, check)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
