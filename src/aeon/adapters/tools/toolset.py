"""Toolsets: tools that share state (a client, a session, a folder) as the public methods of one instance."""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any

from aeon.adapters.tools.decorator import ToolDefinition, ToolOptions, build_definition, tool_options
from aeon.application.errors import ToolRegistrationError


class Toolset:
    """Subclass this; every public method of an instance becomes a tool named after the method.

    Schemas come from each method's type hints and its docstring's first paragraph, exactly as for `@tool`
    functions (`self` excluded). `@tool(name=..., example={...})` on a method renames it or adds an example. Methods
    whose name starts with an underscore, properties and attributes are not tools. Register an instance with
    `ToolRegistry.register_toolset(instance)`, or create one at module level in a `tools.modules` module.
    """


def toolset_definitions(toolset: Toolset) -> list[ToolDefinition]:
    """One ToolDefinition per public method of `toolset`, bound to it, in definition order (base classes first)."""
    if not isinstance(toolset, Toolset):
        raise ToolRegistrationError(
            f"{type(toolset).__name__} is not a Toolset: subclass aeon.adapters.tools.Toolset to register its methods"
        )
    definitions = []
    for name, attr in _public_methods(type(toolset)).items():
        options = tool_options(attr) or ToolOptions()
        definitions.append(build_definition(getattr(toolset, name), replace(options, name=options.name or name)))
    return definitions


def _public_methods(cls: type[Toolset]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if klass in (object, Toolset):
            continue
        for name, value in vars(klass).items():
            func = value.__func__ if isinstance(value, staticmethod | classmethod) else value
            if not name.startswith("_") and inspect.isfunction(func):
                found[name] = func
            elif name in found:  # overridden by something that is not a method
                del found[name]
    return found
