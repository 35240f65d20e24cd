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
from aeon.application.kernel.result import RunResult
from aeon.application.kernel.run import RunSettings
from aeon.domain.llm import Message

Answer = Callable[[Sequence[Message], int], Any]  # (messages, nth call of this kind) -> JSON-able answer


def responder(answers: Mapping[str, Answer]) -> testing.FunctionLLM:
    """A model answering each call by the kind of answer asked for: answers[schema_name](messages, nth of that kind)."""
    asked: list[str] = []

    def answer(call: testing.LLMCall) -> str:
        nth = asked.count(call.schema_name)
        asked.append(call.schema_name)
        if call.schema_name == "evaluation" and "evaluation" not in answers:
            return evaluation(answers, call.messages, nth)
        value = answers[call.schema_name](call.messages, nth)
        return value if isinstance(value, str) else json.dumps(value)

    return testing.FunctionLLM(answer, name="responder")


def evaluation(answers: Mapping[str, Answer], messages: Sequence[Message], nth: int) -> str:
    """The one evaluation call of a pass, answered from a test's `validation` and `convergence` answers: the issue
    list of the one and the judgement of the other; either answer unusable (not a JSON object) is the answer."""
    parts = []
    for kind in ("validation", "convergence"):
        value = answers[kind](messages, nth)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                return value
        if not isinstance(value, dict):
            return json.dumps(value)
        parts.append(value)
    validation, convergence = parts
    if "issues" not in validation:
        return json.dumps(validation)
    return json.dumps({**{k: v for k, v in convergence.items() if k != "issues"}, "issues": validation["issues"]})


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
