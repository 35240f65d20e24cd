"""Every JSON schema Aeon can send, sent through every dialect, is one the provider accepts (wire_rules).

The schemas are found where they are defined, not listed here: every `*_SCHEMA` constant and every `*_schema()`
builder of the application package, and the input and output schemas of the built-in tools. A new schema is covered
by being defined; a `schema=` argument that names anything else fails `test_every_schema_argument_is_enumerated`.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import json
import pkgutil
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from wire_rules import (
    anthropic_message_response,
    anthropic_request_problems,
    openai_chat_response,
    openai_request_problems,
)

import aeon.application
from aeon.adapters.llm.anthropic import AnthropicLLM
from aeon.adapters.llm.dialects import DIALECTS
from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.judges.refiner import Refiner
from aeon.application.llm.prompts.profiles import CHAT
from aeon.application.plans.validation import structural_problems
from aeon.domain.llm import Message

from multipass import add_step

APPLICATION = Path(aeon.application.__file__).parent


@cache
def _builtin_specs() -> list[Any]:
    registry = ToolRegistry()
    register_builtins(registry)
    return registry.list()


def _builder_arguments(builder: Callable[..., Any]) -> dict[str, Any]:
    """Arguments for a `*_schema()` builder: the built-in tools for whatever it takes about tools."""
    names = sorted(spec.name for spec in _builtin_specs())
    samples: dict[str, Any] = {"tool_names": names, "tool": {"type": "string", "enum": names}, "max_steps": 12}
    arguments = {}
    for name, param in inspect.signature(builder).parameters.items():
        if name in samples:
            arguments[name] = samples[name]
        elif param.default is inspect.Parameter.empty:
            raise AssertionError(f"{builder.__qualname__}({name}=…): add a sample value for {name!r} to this test")
    return arguments


@cache
def aeon_schemas() -> dict[str, Mapping[str, Any]]:
    """Every schema Aeon can send, by where it is defined."""
    found: dict[str, Mapping[str, Any]] = {}
    for info in pkgutil.walk_packages(aeon.application.__path__, "aeon.application."):
        if info.name.startswith("aeon.application.views."):  # what the doors show people and MCP clients, never a model
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if name.endswith("_SCHEMA") and isinstance(value, dict):
                found[f"{info.name}.{name}"] = value
            elif name.endswith("_schema") and inspect.isfunction(value) and value.__module__ == info.name:
                found[f"{info.name}.{name}()"] = value(**_builder_arguments(value))
    for spec in _builtin_specs():
        found[f"tool {spec.name} input_schema"] = spec.input_schema
        found[f"tool {spec.name} output_schema"] = spec.output_schema
    # each as the chat profile sends it (prompts/profiles.py `compact`): every prompt set's form is sent too
    found |= {f"{name} (chat)": CHAT.schema_form(schema) for name, schema in found.items()}
    return found


def _schema_expressions() -> list[tuple[str, str]]:
    """(where, expression) of every `schema=` keyword argument in the application package."""
    found = []
    for path in sorted(APPLICATION.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                found += [
                    (f"{path.relative_to(APPLICATION)}:{node.lineno}", ast.unparse(kw.value))
                    for kw in node.keywords
                    if kw.arg == "schema"
                ]
    return found


def test_every_schema_argument_is_enumerated() -> None:
    # A schema reaches the port only through a `*_SCHEMA` constant, a `*_schema()` builder (kept on `self`), or a
    # parameter passing one of those on; an inline literal would escape `aeon_schemas`.
    allowed = {"schema", "self.schema", "self._schema", "self._both_schema"}  # the last: profile_and_plan_schema()
    # … or one of those in the prompt profile's form (PromptSet.schema: as written, or compacted for chat models)
    formed = {f"{prompts}.schema_form({name})" for prompts in ("prompts", "self.prompts") for name in allowed}
    strays = [
        (where, expr)
        for where, expr in _schema_expressions()
        if expr not in allowed | formed
        and not expr.removeprefix("prompts.schema_form(").endswith("_SCHEMA)")
        and not expr.endswith("_SCHEMA")
    ]
    assert strays == []
    assert len(_schema_expressions()) >= 8  # the scan sees the calls it guards


def test_the_enumeration_finds_every_prompt_kinds_schema() -> None:
    names = set(aeon_schemas())
    for expected in (
        "aeon.application.plans.validation.plan_schema()",
        "aeon.application.llm.planner.profile_and_plan_schema()",
        "aeon.application.plans.validation.step_schema()",
        "aeon.application.llm.profiler.PROFILE_SCHEMA",
        "aeon.application.judges.evaluator.EVALUATION_SCHEMA",
        "aeon.application.kernel.executor.REASON_SCHEMA",
        "aeon.application.judges.refiner.refinement_schema()",
        "tool calculator input_schema",
    ):
        assert expected in names


def _answer(wire: str, body: Mapping[str, Any]) -> httpx.Response:
    if wire == "openai":
        return httpx.Response(200, json=openai_chat_response(content="{}"))
    if body.get("tool_choice"):
        block = {"type": "tool_use", "id": "toolu_1", "name": body["tools"][0]["name"], "input": {}}
    else:
        block = {"type": "text", "text": "{}"}
    return httpx.Response(200, json=anthropic_message_response(blocks=[block]))


def _sent_body(dialect: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The request body the dialect's adapter sends for one call under `schema`."""
    wire = DIALECTS[dialect].wire
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return _answer(wire, bodies[-1])

    transport = httpx.MockTransport(handler)
    llm: OpenAICompatLLM | AnthropicLLM
    if wire == "openai":
        model = "o3" if dialect == "openai-reasoning" else "gpt-4.1" if dialect == "openai-chat" else "local-gguf"
        llm = OpenAICompatLLM("https://api.openai.com/v1", model, "sk-test", dialect=dialect, transport=transport)
    else:
        budget = 1024 if DIALECTS[dialect].thinking else None
        llm = AnthropicLLM(
            "https://api.anthropic.com",
            "claude-sonnet-5-5",
            "sk-test",
            dialect=dialect,
            thinking_budget=budget,
            transport=transport,
        )

    async def call() -> None:
        try:
            await llm.complete([Message(role="user", content="Answer.")], schema=schema, schema_name="answer")
        finally:
            await llm.aclose()

    asyncio.run(call())
    assert len(bodies) == 1, f"{dialect}: {len(bodies)} requests for one call (a downgrade round trip?)"
    return bodies[0]


def _problems(dialect: str, body: dict[str, Any]) -> list[str]:
    hosted = dialect in ("openai-chat", "openai-reasoning", "anthropic", "anthropic-thinking")
    if DIALECTS[dialect].wire == "openai":
        return openai_request_problems(body, hosted=hosted)
    if not hosted:
        body = {k: v for k, v in body.items() if k != "temperature"}  # the 2023-06-01 API version types it
    return anthropic_request_problems(body, thinking_model=DIALECTS[dialect].thinking)


def _sent_schemas(body: Mapping[str, Any]) -> list[Any]:
    fmt = body.get("response_format") or {}
    config = (body.get("output_config") or {}).get("format") or {}
    tools = [tool.get("input_schema") for tool in body.get("tools") or []]
    return [s for s in [(fmt.get("json_schema") or {}).get("schema"), config.get("schema"), *tools] if s is not None]


@pytest.mark.block_network
@pytest.mark.parametrize("dialect", sorted(DIALECTS))
@pytest.mark.parametrize("name", sorted(aeon_schemas()))
def test_every_schema_in_every_dialect_is_sent_as_the_provider_accepts_it(name: str, dialect: str) -> None:
    body = _sent_body(dialect, aeon_schemas()[name])
    assert _problems(dialect, body) == []
    for sent in _sent_schemas(body):
        Draft202012Validator.check_schema(sent)  # a valid JSON Schema for every server, llama.cpp's included


def test_the_counts_the_anthropic_form_leaves_to_the_description_are_checked_on_the_answer() -> None:
    # Anthropic does not enforce maxItems; the validators the supervisor runs on every answer do.
    refiner = Refiner(supervisor=None, tools=_builtin_specs(), budget=None)  # type: ignore[arg-type]  # problems() needs no LLM
    added = [add_step(f"s{n}", "State the sum", agent="llm") for n in (2, 3, 4)]
    assert refiner.problems({"actions": added}) == ["actions: has 3 items, more than the 2 allowed"]
    assert refiner.problems({"actions": added[:2]}) == []
    step = {"step_id": "x", "description": "Add", "tool": "calculator", "args": {"expression": "1 + 1"}}
    split = {
        "action_type": "SUBPLAN_CREATE",
        "target_step_id": "s1",
        "new_step": step,
        "substeps": [{**step, "step_id": f"x{n}"} for n in range(4)],
        "justification": "split it",
    }
    assert refiner.problems({"actions": [split]}) == ["action 1: substeps: has 4 items, more than the 3 allowed"]
    steps = [{"step_id": f"s{n}", "description": "Add", "tool": "echo", "args": {"text": "a"}} for n in range(13)]
    problems = [str(p) for p in structural_problems({"goal": "g", "steps": steps}, max_steps=12)]
    assert problems == ["steps: has 13 items, more than the 12 allowed"]
