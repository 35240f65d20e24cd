"""Test harness: an orchestrator wired to a ScriptedLLM, real tools, memory and a JSONL log in a temp file."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from aeon import testing
from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.adapters.memory.inmemory import InMemoryKV
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.errors import LLMError
from aeon.application.kernel.run import RunSettings
from aeon.application.ports import ApproverPort
from aeon.application.results import RunResult
from aeon.application.views.result import result_document
from aeon.domain.llm import Completion
from aeon.domain.plan import Plan
from aeon.testing import ListProgress

FakeClock = testing.FakeClock
ListLog = testing.ListLog


class Provider:
    """Answers each request with the next response; keeps the request bodies."""

    def __init__(self, *responses: httpx.Response) -> None:
        self.responses = list(responses)
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        return self.responses.pop(0)


def tool_specs() -> list[Any]:
    registry = ToolRegistry()
    register_builtins(registry)
    return registry.list()


class FailingLLM(ScriptedLLM):
    """A ScriptedLLM whose call number n (1-based) fails with `failures[n]`: an LLMError is raised (as an adapter
    would raise it), the string "cancel" cancels the run's task while the call is in flight (Ctrl-C mid-call).
    `responses` answer the other calls, in order; failed calls are counted in `calls`, not kept in `requests`."""

    def __init__(self, responses: Sequence[str], failures: Mapping[int, LLMError | str]) -> None:
        super().__init__(responses, source="test-script")
        self._failures = dict(failures)
        self.calls = 0

    async def complete(self, messages: Sequence[Any], **kw: Any) -> Completion:
        self.calls += 1
        failure = self._failures.get(self.calls)
        if failure == "cancel":
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
            await asyncio.sleep(0)  # the cancellation lands here, inside the call
        if isinstance(failure, LLMError):
            raise failure
        return await super().complete(messages, **kw)


@dataclass
class FinishedRun:
    """A run driven to its end by `run()`: its result, the scripted model, the memory, the progress and the log."""

    result: RunResult
    llm: ScriptedLLM
    memory: InMemoryKV
    progress: ListProgress
    log_path: Path

    @property
    def doc(self) -> dict[str, Any]:
        """The result as the --json document shows it (plain data)."""
        return document(self.result)

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log_path.read_text().splitlines()]

    def cycles(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r["event"] == "cycle"]


def document(result: RunResult) -> dict[str, Any]:
    """A result as the --json document shows it (plain data, without the history)."""
    return result_document(result)


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
    llm: ScriptedLLM | None = None,
    approver: ApproverPort | None = None,
    **settings: Any,
) -> FinishedRun:
    """Sprint 1 behaviour by default (one pass, no evaluation); `evaluate=True` runs the multi-pass loop.

    `llm` replaces the ScriptedLLM built from `responses` (a FailingLLM, say)."""
    registry = tools or ToolRegistry()
    if tools is None:
        register_builtins(registry)
    llm = llm if llm is not None else ScriptedLLM(responses, source="test-script")
    mem = memory if memory is not None else InMemoryKV()
    progress = ListProgress()
    log_path = tmp_path / "run.jsonl"
    log = JsonlEventLog(log_path)
    orch = testing.orchestrator(
        llm,
        run=RunSettings(evaluate=evaluate, **settings),
        tools=registry,
        memory=mem,
        log=log,
        progress=progress,
        clock=clock or FakeClock(),
        approver=approver,
    )
    try:
        result = asyncio.run(orch.run(request, plan=plan))
    finally:
        log.close()
    return FinishedRun(result=result, llm=llm, memory=mem, progress=progress, log_path=log_path)
