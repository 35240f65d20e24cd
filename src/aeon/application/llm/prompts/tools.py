"""The tool list of a run's shared prefix, in two forms: in full for base models (each tool's input and output schema
and one example call, which a small base model copies), compact for chat models (a signature and one line)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from aeon.application.policy import Policy
from aeon.domain.provenance import fence
from aeon.domain.tools import ToolSpec

UNTRUSTED_DESCRIPTION = 400  # at most this many characters of a tool description from an MCP server not trusted
NO_TOOLS = "(no tools are registered)"


def _description(t: ToolSpec, policy: Policy | None, text: str) -> str:
    """`text` (the tool's description, or its first line) as a prompt may show it: fenced and bounded as data when
    the tool comes from an MCP server the policy does not trust."""
    if (policy or Policy()).trusts_description(t):
        return text
    return fence(text, f"MCP server {t.server!r}", limit=UNTRUSTED_DESCRIPTION)


def describe_tools(tools: Sequence[ToolSpec], policy: Policy | None = None) -> str:
    """Every tool with its input/output schema and one example invocation (the base profile's tool list)."""
    lines = []
    for t in tools:
        example = json.dumps({"tool": t.name, "args": t.example}, separators=(", ", ": "))
        description = _description(t, policy, t.description)
        lines.append(
            f"- {t.name}: {description} input_schema: {json.dumps(t.input_schema)} "
            f"output_schema: {json.dumps(t.output_schema)} example: {example}"
        )
    return "\n".join(lines) or NO_TOOLS


def _type(schema: Any) -> str:
    """A JSON schema's type in a word or two: "string", "integer|null", "'a'|'b'" for an enum, "any" otherwise."""
    if not isinstance(schema, Mapping):
        return "any"
    if isinstance(schema.get("enum"), list):
        return "|".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if kind == "array":
        return f"{_type(schema.get('items'))}[]"
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list):
        return "|".join(_type(b) for b in branches)
    return str(kind) if kind else "any"


def signature(t: ToolSpec) -> str:
    """`name(arg: type, optional?: type) -> output type`, from the tool's input and output schemas."""
    props = t.input_schema.get("properties") or {}
    required = set(t.input_schema.get("required") or ())
    args = ", ".join(f"{name}{'' if name in required else '?'}: {_type(s)}" for name, s in props.items())
    return f"{t.name}({args}) -> {_type(t.output_schema)}"


def describe_tools_compact(tools: Sequence[ToolSpec], policy: Policy | None = None) -> str:
    """Every tool as one line, its signature and the first line of its description (the chat profile's tool list)."""
    lines = []
    for t in tools:
        first = t.description.strip().splitlines()[0] if t.description.strip() else ""
        described = _description(t, policy, first)
        lines.append(f"- {signature(t)}" + (f": {described}" if described else ""))
    return "\n".join(lines) or NO_TOOLS
