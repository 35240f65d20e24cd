"""The durable adapters without a database: a step runner that keeps outputs by step name stands in for DBOS, so
these show what a re-execution does — recorded answers are not asked again, log records not written twice."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from free_records import rec

from aeon import testing
from aeon.adapters.durable.replay_log import ReplayLog, mend_tail, records_written
from aeon.adapters.durable.steps import (
    Cursor,
    DurableCheckpoint,
    DurableLLM,
    DurableTools,
    Recorder,
    UnsafeToolInFlight,
    checkpoint_passes,
    in_flight_unsafe,
)
from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.decorator import tool
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.errors import LLMUnavailable
from aeon.domain.llm import Message

PLAN = {
    "goal": "sum",
    "steps": [{"step_id": "s1", "description": "add", "tool": "calculator", "args": {"expression": "5 + 10"}}],
}


class Record:
    """DBOS's memo, by step name: a step on the record returns its output without running."""

    def __init__(self) -> None:
        self.outputs: dict[str, Any] = {}
        self.names: list[str] = []

    async def step(self, name: str, fn: Callable[[], Awaitable[Any]]) -> Any:
        self.names.append(name)
        if name not in self.outputs:
            self.outputs[name] = await fn()
        return self.outputs[name]


def _durable_run(
    record: Record,
    llm: Any,
    log: ReplayLog,
    tools: ToolRegistry,
    *,
    recorder: Recorder | None = None,
    defer: float = 0.0,
) -> Any:
    """A one-pass run with every LLM call, every tool call but a pure tool's, and its checkpoint a step on `record`
    (some deferred, with a `recorder` told what the record holds and `defer`)."""
    recorder = recorder or Recorder(log, step=record.step)
    durable_llm = DurableLLM(llm, recorder, defer=defer)

    async def written() -> set[str]:
        return set(record.outputs)

    durable_tools = DurableTools(tools, recorder, idempotent=tools.is_idempotent, pure=tools.is_pure, recorded=written)
    orchestrator = testing.orchestrator(
        durable_llm,
        run=testing.RunSettings(ttl=1, evaluate=False),
        tools=durable_tools,
        log=log,
        checkpoint=DurableCheckpoint(recorder),
    )
    result = asyncio.run(orchestrator.run("sum", correlation_id="run-1", started_at="2026-01-01T00:00:00+00:00"))
    result.warnings.extend(recorder.diverged)
    return result, durable_llm


async def _nothing() -> set[str]:
    return set()


def test_a_re_executed_run_asks_nothing_again_and_writes_each_record_once(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    registry = ToolRegistry()
    register_builtins(registry)
    record = Record()
    first_log = JsonlEventLog(path)
    first, _ = _durable_run(record, ScriptedLLM([json.dumps(PLAN)]), ReplayLog(first_log), registry)
    first_log.close()
    lines = path.read_text().splitlines()
    assert record.names == ["checkpoint p1 A", "llm p1.A.0"]  # the calculator is pure: computed, not recorded

    # the same run executed again from the record: a model with no answers left is never asked
    second_log = JsonlEventLog(path)
    written = records_written(path, "run-1")
    assert written == len(lines)
    again, durable = _durable_run(record, ScriptedLLM([]), ReplayLog(second_log, written=written), registry)
    second_log.close()
    assert durable.replayed == 1
    assert path.read_text().splitlines() == lines  # nothing written twice
    assert again.outputs == first.outputs and again.status == first.status
    assert again.warnings == first.warnings  # the calculator computed again gave what it gave the first time


def test_records_cut_by_a_crash_are_written_by_the_re_execution(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    registry = ToolRegistry()
    register_builtins(registry)
    log = JsonlEventLog(path)
    _durable_run(Record(), ScriptedLLM([json.dumps(PLAN)]), ReplayLog(log), registry)
    log.close()
    whole = path.read_text().splitlines()
    path.write_text("\n".join(whole[:5]) + "\n" + whole[5][:20])  # a crash: 5 records and half a line
    assert records_written(path, "run-1") == 5
    mend_tail(path)
    replay = JsonlEventLog(path)
    _durable_run(Record(), ScriptedLLM([json.dumps(PLAN)]), ReplayLog(replay, written=5), registry)
    replay.close()
    kept = [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{") and line.endswith("}")]
    assert [r["seq"] for r in kept] == list(range(len(whole)))


def test_a_recorded_llm_error_is_raised_again_without_a_call() -> None:
    record = Record()
    failing = testing.answers(LLMUnavailable("down", status=503, attempts=3))
    llm = DurableLLM(failing, Recorder(_Seq(), step=record.step))
    with pytest.raises(LLMUnavailable, match="down"):
        asyncio.run(llm.complete([Message(role="user", content="hi")]))
    silent = testing.answers()
    with pytest.raises(LLMUnavailable) as raised:
        asyncio.run(
            DurableLLM(silent, Recorder(_Seq(), step=record.step)).complete([Message(role="user", content="x")])
        )
    assert raised.value.status == 503 and silent.calls == []


def test_a_started_unsafe_tool_without_result_stops_the_re_execution() -> None:
    @tool
    def launch(target: str) -> str:
        """Launch something, once."""
        return target

    registry = ToolRegistry()
    registry.register_function(launch)
    record = Record()
    record.outputs["tool-start p1.C1.0 launch"] = (True, 0, [])  # started before the crash, never finished

    async def recorded() -> set[str]:
        return set(record.outputs)

    tools = DurableTools(
        registry, Recorder(_Seq(), step=record.step), idempotent=registry.is_idempotent, recorded=recorded
    )
    with pytest.raises(UnsafeToolInFlight) as stopped:
        asyncio.run(_invoke(tools, 1, "launch"))
    assert (stopped.value.tool, stopped.value.key) == ("launch", "p1.C1.0")
    assert in_flight_unsafe(list(record.outputs)) == ("launch", "p1.C1.0")
    allowed = DurableTools(
        registry, Recorder(_Seq(), step=record.step), idempotent=registry.is_idempotent, recorded=recorded,
        rerun_unsafe=True,
    )  # fmt: skip
    assert asyncio.run(_invoke(allowed, 1, "launch")).output == "x"


async def _invoke(tools: DurableTools, pass_number: int, name: str) -> Any:
    tools._recorder.cursor.at(pass_number, "C1")
    return await tools.invoke(name, {"target": "x"})


class _Seq:
    """A log that numbers nothing and never holds records."""

    def mark(self) -> int:
        return 0

    def jump(self, seq: int) -> None:
        return None

    def settle(self, *, again: bool) -> None:
        return None

    def holding(self) -> bool:
        return False


def test_call_keys_restart_at_every_phase_boundary() -> None:
    cursor = Cursor()
    cursor.at(2, "C1")
    assert [cursor.next_key(), cursor.next_key()] == ["p2.C1.0", "p2.C1.1"]
    cursor.at(2, "D")
    assert cursor.next_key() == "p2.D.0"


def test_scripted_model_skips_answers_given_before() -> None:
    llm = ScriptedLLM(["one", "two"])
    llm.skip(1)
    assert asyncio.run(llm.complete([Message(role="user", content="q")])).text == "two"
    assert llm.remaining == 0


def test_a_run_whose_process_is_alive_on_this_host_is_not_resumed() -> None:
    import os
    import socket

    from aeon.adapters.durable.ops import executor_name, running_here

    assert running_here(executor_name("run")) == os.getpid()
    assert running_here(f"run-{socket.gethostname()}-999999999-abcdef12") is None  # no such process
    assert running_here(f"run-elsewhere-{os.getpid()}-abcdef12") is None  # another host: cannot tell
    assert running_here(executor_name("batch", "b1")) is None  # batches and workers recover their own


def test_replay_finds_each_pass_s_checkpoints_by_the_names_the_checkpoint_wrote(tmp_path: Path) -> None:
    registry = ToolRegistry()
    register_builtins(registry)
    record = Record()
    log = JsonlEventLog(tmp_path / "runs.jsonl")
    _durable_run(record, ScriptedLLM([json.dumps(PLAN)]), ReplayLog(log), registry)
    log.close()
    passes = checkpoint_passes(record.names)
    found = [(name, passes[name]) for name in record.names if name in passes]
    assert found == [("checkpoint p1 A", 1)]  # one per pass, at its first phase boundary
    assert "llm p1.A.0" not in passes


def _counting_tools(answers: list[int]) -> tuple[ToolRegistry, list[str]]:
    """A registry with `count`, declared pure: each call takes the next of `answers` (the same each time for an
    honest tool), and says it was called."""
    calls: list[str] = []

    @tool(pure=True)
    def count(text: str) -> int:
        """Count the letters (pure, or so it says)."""
        calls.append(text)
        return answers[min(len(calls), len(answers)) - 1]

    registry = ToolRegistry()
    registry.register_function(count)
    return registry, calls


COUNT_PLAN = {
    "goal": "count",
    "steps": [
        {"step_id": "s1", "description": "count", "tool": "count", "args": {"text": "abc"}},
        {"step_id": "s2", "description": "say what s1 counted", "agent": "llm", "depends_on": ["s1"]},
    ],
}


def test_a_pure_tool_is_computed_again_on_re_execution_and_gives_the_recorded_result(tmp_path: Path) -> None:
    registry, calls = _counting_tools([3])
    record = Record()
    answers = [json.dumps(COUNT_PLAN), "s1 counted 3."]
    first, _ = _durable_run(record, ScriptedLLM(answers), ReplayLog(JsonlEventLog(tmp_path / "a.jsonl")), registry)
    assert not any(name.startswith("tool ") for name in record.names) and len(calls) == 1
    again, durable = _durable_run(record, ScriptedLLM([]), ReplayLog(JsonlEventLog(tmp_path / "b.jsonl")), registry)
    assert len(calls) == 2 and durable.replayed == 2  # computed again; both answers came from the record
    assert again.outputs == first.outputs and again.warnings == first.warnings == []


def test_a_pure_tool_that_gives_another_result_on_re_execution_is_named_in_the_run_s_warnings(tmp_path: Path) -> None:
    registry, _ = _counting_tools([3, 4])  # not pure at all: it answers otherwise the second time
    record = Record()
    answers = [json.dumps(COUNT_PLAN), "s1 counted 3."]
    _durable_run(record, ScriptedLLM(answers), ReplayLog(JsonlEventLog(tmp_path / "a.jsonl")), registry)
    again, _ = _durable_run(record, ScriptedLLM([]), ReplayLog(JsonlEventLog(tmp_path / "b.jsonl")), registry)
    assert again.outputs["s1"].output == 4  # the run goes on with what the tool gave now …
    [warning] = [w for w in again.warnings if "pure" in w]  # … and says that it differs from the first time
    assert "'count' (p1.C1.0)" in warning and "another result" in warning


def test_the_log_is_read_for_a_run_only_when_its_first_step_comes_from_the_record(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    registry = ToolRegistry()
    register_builtins(registry)
    counted: list[int] = []

    def count() -> int:
        counted.append(records_written(path, "run-1"))
        return counted[-1]

    record, first_log = Record(), JsonlEventLog(path)
    _durable_run(record, ScriptedLLM([json.dumps(PLAN)]), ReplayLog(first_log, count=count), registry)
    first_log.close()
    assert counted == []  # its first step ran now: nothing of the run could be in the log, so it is not read
    lines = path.read_text().splitlines()
    second_log = JsonlEventLog(path)
    _durable_run(record, ScriptedLLM([]), ReplayLog(second_log, count=count), registry)
    second_log.close()
    assert counted == [len(lines)] and path.read_text().splitlines() == lines  # read once; nothing written twice


def test_a_crash_before_the_first_step_is_recorded_leaves_no_record_in_the_log(tmp_path: Path) -> None:
    """The records before a run's first step are held until it is recorded: a crash before leaves the log without
    them, so the re-execution, whose first step then runs again, writes them once."""
    path = tmp_path / "runs.jsonl"
    log = ReplayLog(JsonlEventLog(path), count=lambda: records_written(path, "run-1"))
    log.bind("run-1")
    log.emit(rec("run_start", request="sum"))
    assert log.mark() == 1 and not path.exists()  # numbered, not yet written

    async def first() -> None:
        await Recorder(log, step=Record().step).record("checkpoint p1 A", _nothing)

    asyncio.run(first())
    log.close()
    assert [json.loads(line)["seq"] for line in path.read_text().splitlines()] == [0]


def test_a_pure_tool_is_idempotent_too_and_the_built_ins_are_pure() -> None:
    registry, _ = _counting_tools([1])
    register_builtins(registry)
    assert all(registry.is_pure(name) and registry.is_idempotent(name) for name in ("echo", "calculator", "count"))
    assert not registry.is_pure("unknown")
