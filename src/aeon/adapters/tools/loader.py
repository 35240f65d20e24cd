"""Load user tools: import modules by dotted path and register every `@tool` function they expose."""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from aeon.adapters.tools.decorator import ToolDefinition, tool_definition
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.errors import ToolRegistrationError
from aeon.domain.tools import ToolSpec


def load_tool_modules(registry: ToolRegistry, modules: Iterable[str]) -> list[ToolSpec]:
    """Import each module (e.g. "mypkg.tools") and register its `@tool` functions, in definition order.

    A function reachable from several listed modules (a package re-exporting a submodule's tools) is registered
    once. Raises ToolRegistrationError when a module cannot be imported, defines no tool, or a tool is invalid or
    clashes with one already registered.
    """
    seen: set[int] = set()
    loaded: list[ToolSpec] = []
    for path in modules:
        definitions = _definitions_in(path)
        if not definitions:
            raise ToolRegistrationError(f"tools module {path!r} defines no @tool function")
        for definition in definitions:
            if id(definition) in seen:
                continue
            seen.add(id(definition))
            loaded.append(registry.register_function(definition.fn))
    return loaded


def _definitions_in(path: str) -> list[ToolDefinition]:
    try:
        module = importlib.import_module(path)
    except Exception as exc:
        # Any failure while running the module's top level (missing module, syntax error, a bad @tool) lands here.
        raise ToolRegistrationError(f"cannot import tools module {path!r}: {type(exc).__name__}: {exc}") from exc
    found: list[ToolDefinition] = []
    for value in vars(module).values():
        definition = tool_definition(value)
        if definition is not None and all(definition is not other for other in found):
            found.append(definition)
    return found
