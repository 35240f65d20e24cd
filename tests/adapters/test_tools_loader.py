"""Built-in tools and user tool modules loaded by import path."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from aeon.adapters.tools import ToolRegistry, builtin_tools, load_tool_modules, register_builtins
from aeon.application.errors import ToolRegistrationError

HERE = Path(__file__).parent


@pytest.fixture
def user_tools_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE.parent / "support"))


def test_builtins_are_echo_and_calculator_with_their_examples() -> None:
    registry = ToolRegistry()
    specs = register_builtins(registry)
    assert [s.name for s in specs] == ["echo", "calculator"]
    assert len(builtin_tools()) == 2
    assert registry.get("echo") is not None
    assert registry.get("echo").example == {"text": "hello"}  # type: ignore[union-attr]
    calculator = registry.get("calculator")
    assert calculator is not None
    assert calculator.example == {"expression": "5 + 10"}
    assert calculator.output_schema == {"type": "number"}
    assert calculator.input_schema["required"] == ["expression"]


def test_builtins_run_their_examples() -> None:
    registry = ToolRegistry()
    register_builtins(registry)
    assert asyncio.run(registry.invoke("echo", {"text": "hello"})).output == "hello"
    assert asyncio.run(registry.invoke("calculator", {"expression": "5 + 10"})).output == 15


def test_calculator_rejection_is_a_tool_error_not_an_exception() -> None:
    registry = ToolRegistry()
    register_builtins(registry)
    result = asyncio.run(registry.invoke("calculator", {"expression": "5 and 10"}))
    assert result.error == "ValueError: not arithmetic: 'and' is not supported"


@pytest.mark.usefixtures("user_tools_on_path")
def test_loader_registers_every_decorated_function_once_and_ignores_the_rest() -> None:
    registry = ToolRegistry()
    specs = load_tool_modules(registry, ["fixtures_user_tools"])
    assert [s.name for s in specs] == ["greet", "word_count"]
    assert [s.name for s in registry.list()] == ["greet", "word_count"]
    assert registry.get("greet").example == {"name": "Ada"}  # type: ignore[union-attr]


@pytest.mark.usefixtures("user_tools_on_path")
def test_loaded_tools_are_invocable_sync_and_async() -> None:
    registry = ToolRegistry()
    load_tool_modules(registry, ["fixtures_user_tools"])
    greeting = asyncio.run(registry.invoke("greet", {"name": "Ada", "shout": True}))
    assert greeting.output == {"text": "HELLO ADA!", "shouted": True}
    assert asyncio.run(registry.invoke("word_count", {"text": "a b  c"})).output == 3


def test_loader_accepts_a_dotted_package_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE.parent.parent))
    specs = load_tool_modules(ToolRegistry(), ["tests.support.fixtures_user_tools"])
    assert {s.name for s in specs} == {"greet", "word_count"}


def test_missing_module_raises_registration_error_with_the_import_failure() -> None:
    with pytest.raises(ToolRegistrationError) as caught:
        load_tool_modules(ToolRegistry(), ["no_such_pkg.tools"])
    assert str(caught.value) == (
        "cannot import tools module 'no_such_pkg.tools': ModuleNotFoundError: No module named 'no_such_pkg'"
    )


def test_module_without_tools_is_reported() -> None:
    with pytest.raises(ToolRegistrationError, match="tools module 'json' defines no @tool function"):
        load_tool_modules(ToolRegistry(), ["json"])


@pytest.mark.usefixtures("user_tools_on_path")
def test_loading_a_tool_that_clashes_with_a_builtin_or_earlier_load_fails() -> None:
    registry = ToolRegistry()
    load_tool_modules(registry, ["fixtures_user_tools"])
    with pytest.raises(ToolRegistrationError, match="'greet': a tool with this name is already registered"):
        load_tool_modules(registry, ["fixtures_user_tools"])


def test_module_that_fails_while_importing_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_tools_mod.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ToolRegistrationError, match="'broken_tools_mod': RuntimeError: boom at import"):
        load_tool_modules(ToolRegistry(), ["broken_tools_mod"])
