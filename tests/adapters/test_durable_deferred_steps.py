"""Deferred outputs in a durable run, without a database (the step runner of test_durable_steps stands in for DBOS):
answers that came at once and checkpoints wait for the next step that has to be written, ride with it, and come
back from it when the run executes again; a crash before it costs only those answers, asked again."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

from test_durable_steps import PLAN, Record, _durable_run, _Seq

from aeon.adapters.durable.replay_log import ReplayLog, records_written
from aeon.adapters.durable.steps import END_STEP, DurableLLM, Recorder, recorded_outputs
from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.decorator import tool
from aeon.adapters.tools.registry import ToolRegistry

LAUNCHED: list[str] = []


@tool
def launch(target: str) -> str:
    """Launch something (not idempotent: the run writes a step before it runs)."""
    LAUNCHED.append(target)
    return f"launched {target}"


LAUNCH_PLAN = {
    "goal": "launch",
    "steps": [
        {"step_id": "s1", "description": "think first", "agent": "llm"},
        {"step_id": "s2", "description": "launch it", "tool": "launch", "args": {"target": "x"}},
    ],
}


def _tools() -> ToolRegistry:
    registry = ToolRegistry()
    register_builtins(registry)
    registry.register_function(launch)
    return registry


class Clock:
    """Each reading is `tick` seconds after the one before: every call seems to take `tick` seconds."""

    def __init__(self, tick: float) -> None:
        self.now, self.tick = 0.0, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


def _run(
    record: Record,
    answers: list[str],
    log: ReplayLog,
    *,
    steps: list[dict[str, Any]] | None,
    again: bool | None,
    defer: float = 0.02,
    clock: Clock | None = None,
) -> tuple[Any, DurableLLM, list[tuple[str, Any]]]:
    """One pass of a durable run over `record`, told first what the record holds (`steps`; None: fresh); the
    result, the durable model, and what the run's outcome keeps."""
    recorder = Recorder(log, step=record.step, clock=clock or Clock(0.0))
    recorder.start(steps or [], again=again)
    result, llm = _durable_run(record, ScriptedLLM(answers), log, _tools(), recorder=recorder, defer=defer)
    return result, llm, asyncio.run(recorder.finish())


def _steps(record: Record) -> list[dict[str, Any]]:
    """What DBOS lists for the run: its written steps, in the order they were written."""
    return [{"function_name": name, "output": output} for name, output in record.outputs.items()]


def test_answers_that_came_at_once_ride_with_the_step_written_before_a_tool_with_effects(tmp_path: Path) -> None:
    LAUNCHED.clear()
    path = tmp_path / "runs.jsonl"
    record = Record()
    first_log = JsonlEventLog(path)
    answers = [json.dumps(LAUNCH_PLAN), "ready to launch"]
    first, *_ = _run(record, answers, ReplayLog(first_log), steps=None, again=False)
    first_log.close()
    # the plan's answer, s1's answer and the pass's checkpoint were not written on their own …
    assert record.names == ["tool-start p1.C1.1 launch", "tool p1.C1.1 launch"]
    carried = [name for name, _ in recorded_outputs(_steps(record))]
    # … but with the step that had to be written before the launch, in the order they were made
    assert carried == [
        "checkpoint p1 A",
        "llm p1.A.0",
        "llm p1.C1.0",
        "tool-start p1.C1.1 launch",
        "tool p1.C1.1 launch",
    ]
    lines = path.read_text().splitlines()

    # executed again from the record: no answer asked (the model has none left), the launch not repeated
    second_log = JsonlEventLog(path)
    count = lambda: records_written(path, "run-1")  # noqa: E731
    again, llm, _ = _run(record, [], ReplayLog(second_log, count=count), steps=_steps(record), again=True)
    second_log.close()
    assert llm.replayed == 2  # a model with no answers left was never asked: it would have failed the run
    assert LAUNCHED == ["x"]
    assert again.outputs == first.outputs and again.status == first.status == "completed"
    assert path.read_text().splitlines() == lines  # no record written twice


def test_answers_wait_only_while_what_a_crash_would_cost_stays_under_the_bound(tmp_path: Path) -> None:
    record = Record()
    log = JsonlEventLog(tmp_path / "runs.jsonl")
    # each answer takes 15 ms: the plan's waits (15 < 20), s1's would make 30: it is written, with the plan's
    _run(record, [json.dumps(LAUNCH_PLAN), "ready"], ReplayLog(log), steps=None, again=False, clock=Clock(0.015))
    log.close()
    assert record.names[0] == "llm p1.C1.0"
    assert [name for name, _ in recorded_outputs(_steps(record))][:3] == [
        "checkpoint p1 A",
        "llm p1.A.0",
        "llm p1.C1.0",
    ]


def test_with_no_deferral_every_answer_is_a_step_of_its_own(tmp_path: Path) -> None:
    record = Record()
    log = JsonlEventLog(tmp_path / "runs.jsonl")
    _run(record, [json.dumps(LAUNCH_PLAN), "ready"], ReplayLog(log), steps=None, again=False, defer=0.0)
    log.close()
    assert [n for n in record.names if n.startswith("llm ")] == ["llm p1.A.0", "llm p1.C1.0"]


def test_a_crash_before_anything_was_written_asks_the_answers_again_and_writes_no_record_twice(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    answers = [json.dumps(PLAN)]  # the calculator is pure: the run writes no step at all
    first_log = JsonlEventLog(path)
    first, _, kept = _run(Record(), answers, ReplayLog(first_log), steps=None, again=False)
    first_log.close()
    assert [name for name, _ in kept] == ["checkpoint p1 A"]  # what the run's outcome keeps
    lines = path.read_text().splitlines()

    # the process died before DBOS recorded the outcome: the record holds nothing, the log holds every record
    second_log = JsonlEventLog(path)
    count = lambda: records_written(path, "run-1")  # noqa: E731
    again, llm, _ = _run(Record(), answers, ReplayLog(second_log, count=count), steps=[], again=True)
    second_log.close()
    assert llm.replayed == 0  # asked again: it was never written
    assert again.outputs == first.outputs
    assert path.read_text().splitlines() == lines  # the log was read for the run's records: none written twice


def test_a_queued_run_holds_its_log_until_a_step_is_written_and_writes_one_at_its_end_if_none_was(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.jsonl"
    record = Record()
    held = ReplayLog(JsonlEventLog(path), count=lambda: records_written(path, "run-1"))
    _run(record, [json.dumps(PLAN)], held, steps=[], again=None)
    held.close()
    # nothing had to be written during the run, so a step was written at its end, before the log: a crash between
    # them leaves a step on the record, and the execution after it reads the log instead of writing it again
    assert record.names == [END_STEP]
    lines = path.read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == list(range(len(lines)))

    again = ReplayLog(JsonlEventLog(path), count=lambda: records_written(path, "run-1"))
    _run(record, [json.dumps(PLAN)], again, steps=_steps(record), again=True)
    again.close()
    assert path.read_text().splitlines() == lines


def test_a_flush_writes_what_waits_before_the_run_waits_and_nothing_when_nothing_does() -> None:
    record = Record()

    recorder = Recorder(_Seq(), step=record.step, clock=Clock(0.0))
    recorder.start(again=False)

    async def answer() -> str:
        return "yes"

    async def go() -> None:
        recorder.cursor.at(1, "C1")
        await recorder.flush()  # nothing waits: nothing written
        await recorder.record("llm p1.C1.9", answer, defer=math.inf)
        await recorder.flush()

    asyncio.run(go())
    assert record.names == ["carry p1.C1.1"]
    assert recorded_outputs(_steps(record)) == [("llm p1.C1.9", "yes"), ("carry p1.C1.1", None)]
