"""A step's tool call as models write it (key synonyms, printed tool names, bare arguments), read by the registry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aeon.application.schemas import clip
from aeon.domain.tools import ToolSpec

# What models call a step's tool and its arguments (tool-calling APIs and datasets, function-calling prints).
TOOL_KEYS = ("tool_name", "function", "name")
ARGS_KEYS = ("parameters", "arguments", "input")
PREFIXES = ("functions.", "tools.")  # how function-calling APIs print a tool's name


def canonical_keys(step: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`step` with a synonym of `tool` or `args` read as it, when the step lacks that key and its synonyms agree.

    `function` may be an OpenAI tool call, `{"name": …, "arguments": …}`, which gives both."""
    out, changes = dict(step), []
    function = step.get("function")
    call: dict[str, Any] = function if isinstance(function, dict) else {}
    if out.get("tool") is None:
        said = {k: call.get("name") if k == "function" and call else step.get(k) for k in TOOL_KEYS}
        named = {k: v for k, v in said.items() if isinstance(v, str)}
        if len(set(named.values())) == 1:
            out["tool"] = next(iter(named.values()))
            changes.append(f"read {' and '.join(repr(k) for k in named)} as 'tool'")
    if out.get("args") is None:
        given = {k: step[k] for k in ARGS_KEYS if step.get(k) is not None}
        given.update({f"function.{k}": call[k] for k in ("arguments", "parameters") if call.get(k) is not None})
        if len(given) == 1:
            ((key, value),) = given.items()
            out["args"] = value
            changes.append(f"read {key!r} as 'args'")
    return out, changes


def registered_name(name: str, tools: Mapping[str, ToolSpec]) -> str | None:
    """The registered tool `name` means: itself, else the one tool equal to it ignoring case once a `functions.` or
    `tools.` prefix is stripped. None when there is none, or more than one."""
    if name in tools:
        return name
    bare = next((name[len(p) :] for p in PREFIXES if name.lower().startswith(p)), name).lower()
    matches = [t for t in tools if t.lower() == bare]
    return matches[0] if len(matches) == 1 else None


def bare_args(value: Any, spec: ToolSpec) -> dict[str, Any] | None:
    """`value` as the arguments of a tool with exactly one required parameter of its type (a string, a number);
    None for any other tool or value."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    required = spec.input_schema.get("required") or []
    if len(required) != 1:
        return None
    (param,) = required
    kind = (spec.input_schema.get("properties") or {}).get(param, {}).get("type")
    fits = {"string": isinstance(value, str), "number": not isinstance(value, str), "integer": isinstance(value, int)}
    return {param: value} if fits.get(kind) else None


def registered_call(step: dict[str, Any], tools: Mapping[str, ToolSpec]) -> tuple[dict[str, Any], list[str]]:
    """`step` with its tool's registered name and, where a bare value stands for its arguments, those arguments."""
    out, changes = dict(step), []
    tool = out.get("tool")
    name = registered_name(tool, tools) if isinstance(tool, str) else None
    if name is not None and name != tool:
        out["tool"] = name
        changes.append(f"tool {clip(str(tool), 60)!r} is the registered {name!r}")
    spec = tools.get(name) if name is not None else None
    args = bare_args(out.get("args"), spec) if spec is not None else None
    if args is not None and spec is not None:
        changes.append(f"bare args {clip(str(out['args']), 60)!r} given as {spec.name!r}'s one required parameter")
        out["args"] = args
    return out, changes
