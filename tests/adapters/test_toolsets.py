"""Tools that share state: a Toolset's public methods, or @tool methods of an instance, become tools."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from aeon.adapters.tools import ToolRegistry, Toolset, tool
from aeon.application.errors import ToolRegistrationError
from aeon.domain.tools import ToolResult


class Counter(Toolset):
    """A counter shared by its tools."""

    def __init__(self, start: int = 0) -> None:
        self.value = start

    def add(self, amount: int = 1) -> int:
        """Add to the counter and return the new value."""
        self.value += self._checked(amount)
        return self.value

    @tool(name="counter_value", example={})
    async def current(self) -> int:
        """The counter's current value."""
        return self.value

    def _checked(self, amount: int) -> int:
        if amount < 0:
            raise ValueError("amounts are positive")
        return amount


def invoke(registry: ToolRegistry, name: str, args: dict[str, Any]) -> ToolResult:
    return asyncio.run(registry.invoke(name, args))


def test_every_public_method_of_a_toolset_is_a_tool_without_self_in_its_schema() -> None:
    registry = ToolRegistry()
    specs = registry.register_toolset(Counter())

    assert [s.name for s in specs] == ["add", "counter_value"]
    add = registry.get("add")
    assert add is not None
    assert add.description == "Add to the counter and return the new value."
    assert add.input_schema["properties"].keys() == {"amount"}
    assert add.input_schema["required"] == []
    assert add.output_schema == {"type": "integer"}
    assert registry.get("counter_value").input_schema["properties"] == {}  # type: ignore[union-attr]
    assert registry.get("_checked") is None


def test_tools_of_one_instance_share_its_state() -> None:
    registry = ToolRegistry()
    counter = Counter(start=10)
    registry.register_toolset(counter)

    assert invoke(registry, "add", {"amount": 5}).output == 15
    assert invoke(registry, "add", {}).output == 16
    assert invoke(registry, "counter_value", {}).output == 16
    assert counter.value == 16
    assert invoke(registry, "add", {"amount": "many"}).error is not None  # arguments validated as for functions


def test_two_instances_are_two_separate_states_under_distinct_names() -> None:
    class Named(Toolset):
        """Tools named after the instance."""

        def __init__(self, label: str) -> None:
            self.label = label

        def label_of(self) -> str:
            """The label."""
            return self.label

    registry = ToolRegistry()
    registry.register_toolset(Named("a"))
    with pytest.raises(ToolRegistrationError, match=r"'label_of'.*already registered"):
        registry.register_toolset(Named("b"))
    assert invoke(registry, "label_of", {}).output == "a"


def test_a_tool_method_of_a_plain_class_registers_from_its_bound_method() -> None:
    class Client:
        def __init__(self) -> None:
            self.calls = 0

        @tool(example={"text": "hi"})
        def shout(self, text: str) -> str:
            """Shout a text."""
            self.calls += 1
            return text.upper()

    client = Client()
    registry = ToolRegistry()
    spec = registry.register_function(client.shout)

    assert spec.name == "shout"
    assert spec.input_schema["required"] == ["text"]
    assert invoke(registry, "shout", {"text": "hi"}).output == "HI"
    assert client.calls == 1
    assert client.shout("x") == "X"  # the method is still an ordinary method


def test_decorating_a_bound_method_gives_a_registrable_tool() -> None:
    class Client:
        def greet(self, name: str) -> str:
            """Greet someone."""
            return f"hello {name}"

    registry = ToolRegistry()
    greet = tool(Client().greet)
    registry.register_function(greet)

    assert invoke(registry, "greet", {"name": "Ada"}).output == "hello Ada"


def test_a_toolset_method_without_a_docstring_is_a_registration_error_naming_it() -> None:
    class Sloppy(Toolset):
        """No docs on the method."""

        def act(self, x: int) -> int:
            return x

    with pytest.raises(ToolRegistrationError, match=r"'act'.*docstring"):
        ToolRegistry().register_toolset(Sloppy())


def test_registering_something_that_is_not_a_toolset_says_how() -> None:
    with pytest.raises(ToolRegistrationError, match="Toolset"):
        ToolRegistry().register_toolset(object())  # type: ignore[arg-type]
