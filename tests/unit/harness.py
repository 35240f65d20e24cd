"""Test harness: an orchestrator wired to a ScriptedLLM, real tools, memory and a JSONL log in a temp file."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.adapters.memory.inmemory import InMemoryKV
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.orchestrator import Orchestrator, RunSettings
from aeon.application.result import RunResult
from aeon.domain.plan import Plan
from aeon.domain.records import LostRecords


class FakeClock:
    """Advances a fixed amount on every reading; never touches the real clock."""

    def __init__(self, step: float = 0.001) -> None:
        self._t = 0.0
        self._step = step
        self._start = datetime(2026, 1, 1, tzinfo=UTC)
        self.slept: list[float] = []

    def now(self) -> datetime:
        self._t += self._step
        return self._start + timedelta(seconds=self._t)

    def monotonic(self) -> float:
        self._t += self._step
        return self._t

    def advance(self, seconds: float) -> None:
        self._t += seconds

    async def sleep(self, seconds: float) -> None:
        """Waiting only moves this clock on; the requested waits are kept for tests to assert."""
        self.slept.append(seconds)
        self._t += seconds


class ListLog:
    """A LoggerPort that keeps (event, fields) in memory and never loses a record."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def open(self) -> None:
        pass

    def bind(self, correlation_id: str) -> None:
        pass

    def emit(self, event: str, /, **fields: Any) -> None:
        self.events.append((event, fields))

    def lost(self) -> LostRecords | None:
        return None

    def close(self) -> None:
        pass


def tool_specs() -> list[Any]:
    registry = ToolRegistry()
    register_builtins(registry)
    return registry.list()


@dataclass
class Recorder:
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def update(self, event: str, data: Mapping[str, Any]) -> None:
        self.events.append((event, dict(data)))

    def kinds(self) -> list[str]:
        return [e for e, _ in self.events]


@dataclass
class Run:
    result: RunResult
    llm: ScriptedLLM
    memory: InMemoryKV
    progress: Recorder
    log_path: Path

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log_path.read_text().splitlines()]

    def cycles(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r["event"] == "cycle"]


def plan_json(*steps: Mapping[str, Any], goal: str = "calculate the sum of 5 and 10") -> str:
    return json.dumps({"goal": goal, "steps": list(steps)})


SUM_STEP = {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expression": "5 + 10"}}


def run(
    tmp_path: Path,
    responses: Sequence[str | Mapping[str, Any]],
    *,
    request: str = "calculate the sum of 5 and 10",
    plan: Plan | None = None,
    tools: ToolRegistry | None = None,
    memory: InMemoryKV | None = None,
    clock: FakeClock | None = None,
    evaluate: bool = False,
    **settings: Any,
) -> Run:
    """Sprint 1 behaviour by default (one pass, no evaluation); `evaluate=True` runs the multi-pass loop."""
    registry = tools or ToolRegistry()
    if tools is None:
        register_builtins(registry)
    llm = ScriptedLLM(responses, source="test-script")
    mem = memory if memory is not None else InMemoryKV()
    progress = Recorder()
    log_path = tmp_path / "run.jsonl"
    log = JsonlEventLog(log_path)
    orch = Orchestrator(
        llm=llm,
        tools=registry,
        memory=mem,
        logger=log,
        progress=progress,
        clock=clock or FakeClock(),
        settings=RunSettings(evaluate=evaluate, **settings),
    )
    try:
        result = asyncio.run(orch.run(request, plan=plan))
    finally:
        log.close()
    return Run(result=result, llm=llm, memory=mem, progress=progress, log_path=log_path)
