"""CompositeTools: one ToolPort over several (the Python registry, the MCP servers' tools), one namespace."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any, Protocol

from aeon.application.errors import ToolNotFound, ToolRegistrationError
from aeon.application.ports import ToolPort
from aeon.domain.tools import ToolResult, ToolSpec


class ToolSource(ToolPort, Protocol):
    """A ToolPort that also says whether a tool is safe to run again (durable runs ask), and takes the config's
    word on whether a tool's calls need approval (tools.approval)."""

    def is_idempotent(self, name: str) -> bool: ...

    def require_approval(self, name: str, needed: bool = True) -> None: ...


class CompositeTools:
    """Satisfies ToolPort: the tools of each source, in order, as one set — those they hold when it is made (build
    it after the last registration). A name offered by two sources is a ToolRegistrationError naming both (an MCP
    server's `prefix` keeps its names apart). Each source's `get` is asked every time, so a spec its source changes
    later (an approval set by config) is the one seen."""

    def __init__(self, *sources: ToolSource) -> None:
        self._sources = sources
        self._routes: dict[str, ToolSource] = {}
        for source in sources:
            for spec in source.list():
                if spec.name in self._routes:
                    first = _origin(self._routes[spec.name].get(spec.name))
                    raise ToolRegistrationError(
                        f"tool {spec.name!r} is offered by {first} and by {_origin(spec)}: "
                        "give the MCP server a prefix (tools.mcp[].prefix) or leave the tool out (include/exclude)"
                    )
                self._routes[spec.name] = source

    def list(self) -> builtins.list[ToolSpec]:
        return [spec for source in self._sources for spec in source.list()]

    def get(self, name: str) -> ToolSpec | None:
        source = self._routes.get(name)
        return source.get(name) if source is not None else None

    def is_idempotent(self, name: str) -> bool:
        source = self._routes.get(name)
        return source is not None and source.is_idempotent(name)

    def is_pure(self, name: str) -> bool:
        """Whether the tool said it is deterministic and changes nothing (`@tool(pure=True)`; an MCP tool never)."""
        spec = self.get(name)
        return spec is not None and spec.pure

    def require_approval(self, name: str, needed: bool = True) -> None:
        """Whether each call of tool `name`, from any source, needs a person's approval (config tools.approval)."""
        source = self._routes.get(name)
        if source is None:
            known = ", ".join(sorted(self._routes)) or "none"
            raise ToolRegistrationError(f"tools.approval names tool {name!r}, which is not registered (tools: {known})")
        source.require_approval(name, needed)

    async def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float | None = None) -> ToolResult:
        source = self._routes.get(name)
        if source is None:
            known = ", ".join(sorted(self._routes)) or "none"
            raise ToolNotFound(f"unknown tool {name!r} (registered: {known})")
        return await source.invoke(name, args, time_left=time_left)


def _origin(spec: ToolSpec | None) -> str:
    if spec is None or spec.server is None:
        return "a Python tool"
    return f"MCP server {spec.server!r}"
