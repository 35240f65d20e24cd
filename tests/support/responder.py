"""A fake model that answers each call by the kind of answer asked for (its schema name), for long multi-pass runs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from aeon import testing
from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.result import RunResult
from aeon.application.run import RunSettings
from aeon.domain.llm import Message

Answer = Callable[[Sequence[Message], int], Any]  # (messages, nth call of this kind) -> JSON-able answer


def responder(answers: Mapping[str, Answer]) -> testing.FunctionLLM:
    """A model answering each call by the kind of answer asked for: answers[schema_name](messages, nth of that kind)."""
    asked: list[str] = []

    def answer(call: testing.LLMCall) -> str:
        nth = asked.count(call.schema_name)
        asked.append(call.schema_name)
        value = answers[call.schema_name](call.messages, nth)
        return value if isinstance(value, str) else json.dumps(value)

    return testing.FunctionLLM(answer, name="responder")


def prompt_of(messages: Sequence[Message]) -> str:
    return messages[-1].content


def run_with(tmp_path: Path, answers: Mapping[str, Answer], request: str, **settings: Any) -> tuple[RunResult, Path]:
    tools = ToolRegistry()
    register_builtins(tools)
    log_path = tmp_path / "run.jsonl"
    log = JsonlEventLog(log_path)
    orch = testing.orchestrator(responder(answers), run=RunSettings(**settings), tools=tools, log=log)
    try:
        return asyncio.run(orch.run(request)), log_path
    finally:
        log.close()
