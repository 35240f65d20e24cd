"""Kernel overhead: a 10-step plan through the whole orchestrator with an instant scripted LLM and the JSONL log on,
beside LangGraph's plan-and-execute loop with a fake model (bench/langgraph_loop.py) when the [bench] extra is in.

Prints the median microseconds per executed step (everything the kernel does around a step: validation, tool call,
memory, progress, cycle record) and per JSONL log record, and the same runs with the log a sink (records counted,
never encoded, redacted or written): what the kernel costs without its log, and what the log adds.
Run: `.venv/bin/python bench/overhead.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

from aeon.adapters.clock import SystemClock
from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.application.kernel.orchestrator import Orchestrator
from aeon.application.kernel.run import RunSettings
from aeon.application.redaction import Redactor
from aeon.application.results import RunResult
from aeon.domain.log_pass import CycleRecord
from aeon.domain.progress import ProgressEvent
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.container import run_scope
from aeon.entrypoints.secrets import run_secrets

STEPS = 10


class NoProgress:
    """A display that shows nothing: the kernel still builds, redacts and sends every event."""

    def update(self, event: ProgressEvent) -> None:
        return None


def plan_steps(count: int = STEPS) -> list[dict[str, Any]]:
    """The bench's plan (LangGraph's loop runs the same): every fifth step an LLM step, the others calculator and
    echo calls in turn."""
    steps: list[dict[str, Any]] = []
    for i in range(1, count + 1):
        if i % 5 == 0:
            steps.append({"step_id": f"s{i}", "description": f"explain step {i - 1}", "agent": "llm"})
        elif i % 2:
            steps.append(
                {"step_id": f"s{i}", "description": "add", "tool": "calculator", "args": {"expression": f"{i} * 3 + 1"}}
            )
        else:
            steps.append({"step_id": f"s{i}", "description": "echo", "tool": "echo", "args": {"text": f"v{i}"}})
    return steps


def _plan() -> str:
    return json.dumps({"goal": "benchmark", "steps": plan_steps()})


def orchestrator(answers: list[str], log: JsonlEventLog, settings: RunSettings) -> Orchestrator:
    """Built by Aeon's own composition root, with an instant scripted model, the real log and the system clock.
    The log blanks secrets with the run's own Redactor, as in `aeon run`, whose container gives the kernel and the
    log the same one. The log is opened first, as `aeon run` opens it before the run starts (so a log that cannot
    be written stops the run before anything is spent)."""
    log.open()
    orch = run_scope(run=settings, llm=ScriptedLLM(answers), logger=log, progress=NoProgress(), clock=SystemClock())
    orch.redactor = log.redactor
    return orch


def new_log(path: Path | None) -> JsonlEventLog:
    """The log with the Redactor the container would build for the run (from the same settings)."""
    return JsonlEventLog(path, redactor=Redactor(run_secrets(Settings())))


# One event loop for every run, as in a server or a batch, and the clock read inside it: asyncio.run's own setup
# and teardown (over 100 µs, and a repr of the returned result when it restores the SIGINT handler) is not work the
# kernel does. LangGraph's loop is timed around its synchronous invoke, which has no such cost.
LOOP = asyncio.Runner()


async def _timed(orch: Orchestrator) -> tuple[float, RunResult]:
    t0 = time.perf_counter()
    result = await orch.run("benchmark")
    await asyncio.sleep(0)  # the loop's next turn, where the log writes the records it holds: timed with the run
    return time.perf_counter() - t0, result


def one_run(log_path: Path | None) -> tuple[float, int]:
    """Seconds for one run and the records it wrote; with `log_path` None the log is a sink that only counts."""
    responses = [_plan()] + ["an instant answer"] * (STEPS // 5)
    one_pass = RunSettings(ttl=1, max_llm_calls=50, evaluate=False, max_plan_steps=STEPS)
    log = new_log(log_path)
    orch = orchestrator(responses, log, one_pass)  # one plain pass
    elapsed, result = LOOP.run(_timed(orch))
    log.close()
    assert result.status == "completed", result.error
    return elapsed, len(log_path.read_text().splitlines()) if log_path is not None else log.next_seq


def _multipass_answers() -> list[str]:
    """3 passes over a 10-step plan: passes 1 and 2 fail convergence and ADD an LLM step; pass 3 converges."""
    prof = {
        "reasoning_depth": 4,
        "information_sufficiency": 0.3,
        "expected_tool_usage": "moderate",
        "output_breadth": "broad",
        "confidence_requirement": "high",
        "raw_inference": "bench",
    }
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

    reasons = ["an instant answer"] * (STEPS // 5)  # one evaluation answer per pass: judgement and (no) issues
    first = json.dumps({"profile": prof, "plan": json.loads(_plan())})  # phase A: one profile_and_plan call
    return [first, *reasons, fail, add(1), "r1", fail, add(2), "r2", ok]


def multipass_run(log_path: Path) -> tuple[float, int, int]:
    passes = RunSettings(ttl=3, max_llm_calls=60, evaluate=True, max_plan_steps=STEPS)
    log = new_log(log_path)
    orch = orchestrator(_multipass_answers(), log, passes)
    elapsed, result = LOOP.run(_timed(orch))
    log.close()
    assert result.status == "completed" and result.passes == 3, (result.status, result.passes, result.error)
    phases = sum(len(p.phases) for p in result.history.passes if result.history)
    return elapsed, len(result.plan.steps) if result.plan else 0, phases


def log_records(path: Path, n: int) -> float:
    log = JsonlEventLog(path)
    log.bind("00000000-0000-4000-8000-000000000000")
    plan = json.loads(_plan())
    t0 = time.perf_counter()
    for i in range(n):  # one step changes per record, as a run's do
        plan["steps"][i % STEPS]["notes"] = [f"record {i}"]
        log.emit(cycle_record(plan))
    elapsed = time.perf_counter() - t0
    log.close()
    return elapsed / n


def cycle_record(plan: Any) -> CycleRecord:
    """A cycle record holding the full plan snapshot, built as the kernel builds one per cycle."""
    return CycleRecord(
        pass_number=1,
        step_number=3,
        plan_state=plan,
        llm_output=["x"],
        supervisor_actions=[],
        tool_calls=[],
        ttl_remaining=2,
        errors=[],
    )


def scan_per_step(path: Path) -> tuple[float, int]:
    """µs per step the secret scan (Redactor.may_hold, as the log runs it on every record) takes over one run's
    log, and the bytes it reads: the best of 20 passes."""
    records = path.read_bytes().splitlines()
    redactor = Redactor()
    best = min(timeit.repeat(lambda: _scan_all(redactor, records), number=1, repeat=20))
    return best / STEPS * 1e6, sum(map(len, records))


def _scan_all(redactor: Redactor, records: list[bytes]) -> None:
    for record in records:
        redactor.may_hold(record)


def _langgraph() -> tuple[Any, Any]:
    """LangGraph's loop, lean and typical variants, when the [bench] extra is installed."""
    try:
        import langgraph_loop
    except ImportError:
        return None, None
    return (
        lambda plan, i: langgraph_loop.one_run(plan, i, "lean"),
        lambda plan, i: langgraph_loop.one_run(plan, i, "typical"),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="a few seconds: checks the bench still runs (CI)")
    args = ap.parse_args()
    if args.quick:
        args.runs = 3
    plan = json.loads(_plan())["steps"]
    lean, typical = _langgraph()
    with tempfile.TemporaryDirectory() as d:
        per_step, per_record_in_run, lg_lean, lg_typical, no_log = [], [], [], [], []
        for i in range(args.runs):  # alternating, so that a noisy moment hits both
            elapsed, records = one_run(Path(d) / f"run{i}.jsonl")
            per_step.append(elapsed / STEPS * 1e6)
            per_record_in_run.append(elapsed / records * 1e6)
            no_log.append(one_run(None)[0] / STEPS * 1e6)
            if lean is not None:
                lg_lean.append(lean(plan, i) / STEPS * 1e6)
            if typical is not None and i % 4 == 0:
                lg_typical.append(typical(plan, i) / STEPS * 1e6)
        record_only = [log_records(Path(d) / f"log{i}.jsonl", 2000) * 1e6 for i in range(5)]
        scan, scanned = scan_per_step(Path(d) / f"run{args.runs - 1}.jsonl")
        mp_step, mp_phase = [], []
        for i in range(max(args.runs // 4, 1 if args.quick else 10)):
            elapsed, steps, phases = multipass_run(Path(d) / f"mp{i}.jsonl")
            mp_step.append(elapsed / steps * 1e6)
            mp_phase.append(elapsed / phases * 1e6)
    print(f"runs: {args.runs} × {STEPS}-step plan (instant scripted LLM, JSONL log on, fsync at run end)")
    print(f"median µs per executed step (whole run / steps):  {statistics.median(per_step):9.1f}")
    print(f"median µs per log record (whole run / records):   {statistics.median(per_record_in_run):9.1f}")
    if lg_lean:
        aeon, lean_step = statistics.median(per_step), statistics.median(lg_lean)
        print(
            f"LangGraph plan-and-execute, lean (plain-function fake model, no checkpointer): {lean_step:9.1f} µs/step"
        )
        print(
            f"LangGraph plan-and-execute, typical (FakeListChatModel, @tool, InMemorySaver): "
            f"{statistics.median(lg_typical):9.1f} µs/step"
        )
        print(
            f"Aeon per-step overhead as a ratio to LangGraph lean (log on): {aeon / lean_step:.2f}x "
            f"(typical: {aeon / statistics.median(lg_typical):.2f}x)"
        )
        print(f"  the same with the log a sink (the kernel alone): {statistics.median(no_log) / lean_step:.2f}x")
    else:
        print("LangGraph not installed (pip install -e '.[bench]'): no ratio")
    sink = statistics.median(no_log)
    added = statistics.median(per_step) - sink
    print(f"median µs per executed step with the log a sink:   {sink:9.1f} (the log adds {added:.1f})")
    print(f"  of which the secret scan of the run's {scanned // 1024} KiB of records, alone: {scan:9.1f}")
    print(
        f"median µs per log record (JsonlEventLog.emit alone, full plan snapshot): "
        f"{statistics.median(record_only):9.1f}"
    )
    print("multi-pass: 3 passes (A B C D, B C D, B C D) over a 10-step plan growing to 12 steps, instant LLM")
    print(f"median µs per executed step (whole run / steps):  {statistics.median(mp_step):9.1f}")
    print(f"median µs per phase (whole run / phases):         {statistics.median(mp_phase):9.1f}")


if __name__ == "__main__":
    main()
