"""Tool descriptions and the results of invoking them."""

from __future__ import annotations

from typing import Any

import msgspec


class ToolSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What the planner and validator know about a tool: its contract, never its code."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    example: dict[str, Any] = msgspec.field(default_factory=dict)


class ToolResult(msgspec.Struct, frozen=True, kw_only=True):
    """A tool's answer. `error` set means the tool failed; the step is marked failed (FR-054)."""

    output: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None
