"""CompositeTools: the registry's tools and each MCP server's as one ToolPort, one namespace."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Mapping
from typing import Any

import msgspec
import pytest

from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.composite import CompositeTools
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.errors import ToolNotFound, ToolRegistrationError
from aeon.domain.tools import ToolResult, ToolSpec


class FakeServer:
    """Tools as an MCP server's would be: specs with a server, answers recorded."""

    def __init__(self, server: str, *names: str, idempotent: bool = False) -> None:
        self.specs = {
            n: ToolSpec(
                name=n,
                description=n,
                input_schema={"type": "object"},
                output_schema={},
                idempotent=idempotent,
                server=server,
            )
            for n in names
        }
        self.calls: builtins.list[tuple[str, dict[str, Any], float | None]] = []

    def list(self) -> builtins.list[ToolSpec]:
        return builtins.list(self.specs.values())

    def get(self, name: str) -> ToolSpec | None:
        return self.specs.get(name)

    def is_idempotent(self, name: str) -> bool:
        return self.specs[name].idempotent

    def require_approval(self, name: str, needed: bool = True) -> None:
        self.specs[name] = msgspec.structs.replace(self.specs[name], requires_approval=needed)

    async def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float | None = None) -> ToolResult:
        self.calls.append((name, dict(args), time_left))
        return ToolResult(output=f"{name} ran")


def registry() -> ToolRegistry:
    tools = ToolRegistry()
    register_builtins(tools)
    return tools


def test_tools_of_every_source_are_listed_in_order_and_routed_to_their_source() -> None:
    server = FakeServer("web", "search", idempotent=True)
    tools = CompositeTools(registry(), server)

    assert [t.name for t in tools.list()] == ["echo", "calculator", "search"]
    assert asyncio.run(tools.invoke("search", {"q": "x"}, time_left=3.0)).output == "search ran"
    assert server.calls == [("search", {"q": "x"}, 3.0)]
    assert asyncio.run(tools.invoke("echo", {"text": "hi"})).output == "hi"
    assert tools.is_idempotent("search") and tools.is_idempotent("echo") and not tools.is_idempotent("nope")
    assert tools.get("search") is not None and tools.get("search").server == "web"  # type: ignore[union-attr]


def test_an_unknown_tool_is_tool_not_found_naming_every_tool() -> None:
    with pytest.raises(ToolNotFound, match=r"unknown tool 'nope' \(registered: calculator, echo, search\)"):
        asyncio.run(CompositeTools(registry(), FakeServer("web", "search")).invoke("nope", {}))


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        (
            lambda: (registry(), FakeServer("web", "echo")),
            "tool 'echo' is offered by a Python tool and by MCP server 'web'",
        ),
        (
            lambda: (FakeServer("a", "x"), FakeServer("b", "x")),
            "tool 'x' is offered by MCP server 'a' and by MCP server 'b'",
        ),
    ],
)
def test_a_name_offered_twice_is_a_registration_error_naming_both(sources: Any, message: str) -> None:
    with pytest.raises(ToolRegistrationError, match="give the MCP server a prefix") as raised:
        CompositeTools(*sources())
    assert str(raised.value).startswith(message)


def test_config_approval_reaches_the_tools_source_and_a_name_nobody_offers_is_an_error() -> None:
    server = FakeServer("web", "search")
    tools = CompositeTools(registry(), server)

    tools.require_approval("search")
    tools.require_approval("echo")

    assert tools.get("search").requires_approval and tools.get("echo").requires_approval  # type: ignore[union-attr]
    with pytest.raises(ToolRegistrationError, match=r"tools\.approval names tool 'nope', which is not registered"):
        tools.require_approval("nope")
