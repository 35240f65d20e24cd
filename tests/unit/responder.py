"""A fake model that answers each call by the kind of answer asked for (its schema name), for long multi-pass runs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.memory.inmemory import InMemoryKV
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.orchestrator import Orchestrator, RunSettings
from aeon.application.result import RunResult
from aeon.domain.llm import Completion, Message, Usage

from harness import FakeClock, Recorder

Answer = Callable[[Sequence[Message], int], Any]  # (messages, nth call of this kind) -> JSON-able answer


@dataclass
class Responder:
    answers: Mapping[str, Answer]
    calls: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, str]:
        return {"adapter": "test", "model": "test", "dialect": "test", "dialect_source": "test double"}

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
        max_tokens: int | None = None,
        stop: Sequence[str] = (),
    ) -> Completion:
        nth = self.calls.count(schema_name)
        self.calls.append(schema_name)
        value = self.answers[schema_name](messages, nth)
        text = value if isinstance(value, str) else json.dumps(value)
        return Completion(text=text, usage=Usage(prompt_tokens=10, completion_tokens=5), finish_reason="stop")

    async def aclose(self) -> None:
        return None


def prompt_of(messages: Sequence[Message]) -> str:
    return messages[-1].content


def run_with(tmp_path: Path, answers: Mapping[str, Answer], request: str, **settings: Any) -> tuple[RunResult, Path]:
    tools = ToolRegistry()
    register_builtins(tools)
    log_path = tmp_path / "run.jsonl"
    log = JsonlEventLog(log_path)
    orch = Orchestrator(
        llm=Responder(answers),
        tools=tools,
        memory=InMemoryKV(),
        logger=log,
        progress=Recorder(),
        clock=FakeClock(),
        settings=RunSettings(**settings),
    )
    try:
        return asyncio.run(orch.run(request)), log_path
    finally:
        log.close()
