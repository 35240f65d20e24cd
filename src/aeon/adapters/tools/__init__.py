"""Tool adapters: `@tool`, Toolset, the ToolRegistry (ToolPort), built-in tools and the user-module loader."""

from aeon.adapters.tools.builtin import builtin_tools, echo, register_builtins
from aeon.adapters.tools.calculator import calculator, evaluate
from aeon.adapters.tools.decorator import ToolDefinition, build_definition, tool, tool_definition
from aeon.adapters.tools.loader import load_tool_modules, register_tools
from aeon.adapters.tools.registry import ToolRegistry
from aeon.adapters.tools.toolset import Toolset

__all__ = [
    "ToolDefinition",
    "ToolRegistry",
    "Toolset",
    "build_definition",
    "builtin_tools",
    "calculator",
    "echo",
    "evaluate",
    "load_tool_modules",
    "register_builtins",
    "register_tools",
    "tool",
    "tool_definition",
]
