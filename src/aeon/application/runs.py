"""The run use case every front door shares. For now: the check an edited tool call gets before it is sent."""

from __future__ import annotations

from typing import Any

from aeon.application.ports import ToolPort


def schema_problem(tools: ToolPort, tool: str, args: dict[str, Any]) -> str | None:
    """Why `args` do not fit `tool`'s input schema, or None: the argument check every step's call gets (the kernel
    checks an edited call with it again)."""
    from aeon.application.plans.validation import args_problems

    spec = tools.get(tool)
    if spec is None:
        return f"tool {tool!r} is not registered"
    return "; ".join(args_problems(spec, args)) or None
