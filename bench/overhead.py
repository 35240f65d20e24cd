"""Kernel overhead: a 10-step plan through the whole orchestrator with an instant scripted LLM and the JSONL log on.

Prints the median microseconds per executed step (everything the kernel does around a step: validation, tool call,
memory, progress, cycle record) and per JSONL log record. Run: `.venv/bin/python bench/overhead.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from aeon.adapters.clock import SystemClock
from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.adapters.memory.inmemory import InMemoryKV
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.orchestrator import Orchestrator, RunSettings

STEPS = 10


class NoProgress:
    def update(self, event: str, data: object) -> None:
        return None


def _plan() -> str:
    steps = []
    for i in range(1, STEPS + 1):
        if i % 5 == 0:
            steps.append({"step_id": f"s{i}", "description": f"explain step {i - 1}", "agent": "llm"})
        elif i % 2:
            steps.append(
                {"step_id": f"s{i}", "description": "add", "tool": "calculator", "args": {"expression": f"{i} * 3 + 1"}}
            )
        else:
            steps.append({"step_id": f"s{i}", "description": "echo", "tool": "echo", "args": {"text": f"v{i}"}})
    return json.dumps({"goal": "benchmark", "steps": steps})


def one_run(log_path: Path) -> tuple[float, int]:
    responses = [_plan()] + ["an instant answer"] * (STEPS // 5)
    tools = ToolRegistry()
    register_builtins(tools)
    log = JsonlEventLog(log_path)
    orch = Orchestrator(
        llm=ScriptedLLM(responses),
        tools=tools,
        memory=InMemoryKV(),
        logger=log,
        progress=NoProgress(),
        clock=SystemClock(),
        settings=RunSettings(ttl=1, max_llm_calls=50, evaluate=False),  # the Sprint 1 single pass
    )
    t0 = time.perf_counter()
    result = asyncio.run(orch.run("benchmark"))
    elapsed = time.perf_counter() - t0
    log.close()
    assert result.status == "completed", result.error
    return elapsed, len(log_path.read_text().splitlines())


def _multipass_answers() -> list[str]:
    """3 passes over a 10-step plan: passes 1 and 2 fail convergence and ADD an LLM step; pass 3 converges."""
    prof = json.dumps(
        {
            "reasoning_depth": 4,
            "information_sufficiency": 0.3,
            "expected_tool_usage": "moderate",
            "output_breadth": "broad",
            "confidence_requirement": "high",
            "raw_inference": "bench",
        }
    )
    fail = json.dumps(
        {"completeness_score": 0.4, "coherence_score": 0.9, "consistent": True, "explanation": "x", "issues": []}
    )
    ok = json.dumps(
        {"completeness_score": 1.0, "coherence_score": 1.0, "consistent": True, "explanation": "y", "issues": []}
    )

    def add(i: int) -> str:
        step = {"step_id": f"x{i}", "description": f"state result {i}", "agent": "llm"}
        return json.dumps(
            {
                "actions": [
                    {
                        "action_type": "ADD",
                        "target_step_id": "",
                        "new_step": step,
                        "substeps": [],
                        "justification": "state it",
                    }
                ]
            }
        )

    reasons = ["an instant answer"] * (STEPS // 5)
    none = json.dumps({"issues": []})
    return [prof, _plan(), *reasons, none, fail, add(1), "r1", none, fail, add(2), "r2", none, ok]


def multipass_run(log_path: Path) -> tuple[float, int, int]:
    tools = ToolRegistry()
    register_builtins(tools)
    log = JsonlEventLog(log_path)
    orch = Orchestrator(
        llm=ScriptedLLM(_multipass_answers()),
        tools=tools,
        memory=InMemoryKV(),
        logger=log,
        progress=NoProgress(),
        clock=SystemClock(),
        settings=RunSettings(ttl=3, max_llm_calls=60, evaluate=True),
    )
    t0 = time.perf_counter()
    result = asyncio.run(orch.run("benchmark"))
    elapsed = time.perf_counter() - t0
    log.close()
    assert result.status == "completed" and result.passes == 3, (result.status, result.passes, result.error)
    phases = sum(len(p.phases) for p in result.history.passes if result.history)
    return elapsed, len(result.plan["steps"]) if result.plan else 0, phases


def log_records(path: Path, n: int) -> float:
    log = JsonlEventLog(path)
    log.bind("00000000-0000-4000-8000-000000000000")
    payload = {"step_number": 3, "plan_state": json.loads(_plan()), "llm_output": ["x"], "errors": []}
    t0 = time.perf_counter()
    for _ in range(n):
        log.emit("cycle", **payload)
    elapsed = time.perf_counter() - t0
    log.close()
    return elapsed / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        per_step, per_record_in_run = [], []
        for i in range(args.runs):
            elapsed, records = one_run(Path(d) / f"run{i}.jsonl")
            per_step.append(elapsed / STEPS * 1e6)
            per_record_in_run.append(elapsed / records * 1e6)
        record_only = [log_records(Path(d) / f"log{i}.jsonl", 2000) * 1e6 for i in range(5)]
        mp_step, mp_phase = [], []
        for i in range(max(args.runs // 4, 10)):
            elapsed, steps, phases = multipass_run(Path(d) / f"mp{i}.jsonl")
            mp_step.append(elapsed / steps * 1e6)
            mp_phase.append(elapsed / phases * 1e6)
    print(f"runs: {args.runs} × {STEPS}-step plan (instant scripted LLM, JSONL log on, fsync at run end)")
    print(f"median µs per executed step (whole run / steps):  {statistics.median(per_step):9.1f}")
    print(f"median µs per log record (whole run / records):   {statistics.median(per_record_in_run):9.1f}")
    print(
        f"median µs per log record (JsonlEventLog.emit alone, full plan snapshot): "
        f"{statistics.median(record_only):9.1f}"
    )
    print("multi-pass: 3 passes (A B C D, B C D, B C D) over a 10-step plan growing to 12 steps, instant LLM")
    print(f"median µs per executed step (whole run / steps):  {statistics.median(mp_step):9.1f}")
    print(f"median µs per phase (whole run / phases):         {statistics.median(mp_phase):9.1f}")


if __name__ == "__main__":
    main()
