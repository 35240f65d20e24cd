"""The built-in tools every registry starts with: `echo` and `calculator`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aeon.adapters.tools.calculator import calculator
from aeon.adapters.tools.decorator import tool
from aeon.adapters.tools.registry import ToolRegistry
from aeon.domain.tools import ToolSpec


@tool(example={"text": "hello"}, inline=True, pure=True, effect="none", trusted=True)
def echo(text: str) -> str:
    """Return the given text unchanged.

    Useful to carry a value from one step to the next, and as the simplest tool for testing plans.
    """
    return text


def builtin_tools() -> list[Callable[..., Any]]:
    """The decorated built-in tool functions, ready for `ToolRegistry.register_function`."""
    return [echo, calculator]


def register_builtins(registry: ToolRegistry) -> list[ToolSpec]:
    """Register every built-in tool on `registry` and return their specs (vetted: the tests check their schemas)."""
    return [registry.register_function(fn, vetted=True) for fn in builtin_tools()]
