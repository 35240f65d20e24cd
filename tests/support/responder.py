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
from aeon.application.kernel.run import RunSettings
from aeon.application.results import RunResult
from aeon.domain.llm import Message

Answer = Callable[[Sequence[Message], int], Any]  # (messages, nth call of this kind) -> JSON-able answer


def responder(answers: Mapping[str, Answer]) -> testing.FunctionLLM:
    """A model answering each call by the kind of answer asked for: answers[schema_name](messages, nth of that kind)."""
    asked: list[str] = []

    def answer(call: testing.LLMCall) -> str:
        if call.schema_name == "profile_and_plan" and "profile_and_plan" not in answers:
            nth_profile, nth_plan = asked.count("task_profile"), asked.count("plan")
            asked.extend(("task_profile", "plan"))
            return profile_and_plan(answers, call.messages, nth_profile, nth_plan)
        nth = asked.count(call.schema_name)
        asked.append(call.schema_name)
        if call.schema_name == "evaluation" and "evaluation" not in answers:
            return evaluation(answers, call.messages, nth)
        value = answers[call.schema_name](call.messages, nth)
        return value if isinstance(value, str) else json.dumps(value)

    return testing.FunctionLLM(answer, name="responder")


def _objects(answers: Mapping[str, Answer], messages: Sequence[Message], asked: Sequence[tuple[str, int]]) -> Any:
    """The answers of `asked` ((kind, nth) pairs) as JSON objects; the first that is not one, as the answer text."""
    parts = []
    for kind, nth in asked:
        value = answers[kind](messages, nth)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                return value
        if not isinstance(value, dict):
            return json.dumps(value)
        parts.append(value)
    return parts


def profile_and_plan(
    answers: Mapping[str, Answer], messages: Sequence[Message], nth_profile: int, nth_plan: int
) -> str:
    """Phase A's one call of a first pass, answered from a test's `task_profile` and `plan` answers (each counted as
    a call of its own kind); either answer unusable (not a JSON object) is the answer."""
    parts = _objects(answers, messages, [("task_profile", nth_profile), ("plan", nth_plan)])
    if isinstance(parts, str):
        return parts
    profile, plan = parts
    return json.dumps({"profile": profile, "plan": plan})


def evaluation(answers: Mapping[str, Answer], messages: Sequence[Message], nth: int) -> str:
    """The one evaluation call of a pass, answered from a test's `validation` and `convergence` answers: the issue
    list of the one and the judgement of the other; either answer unusable (not a JSON object) is the answer."""
    parts = _objects(answers, messages, [("validation", nth), ("convergence", nth)])
    if isinstance(parts, str):
        return parts
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
