"""`aeon tools` as text: one row per registered tool, its arguments and return type read from its JSON schemas."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from aeon.domain.tools import ToolSpec


def tool_rows(specs: Sequence[ToolSpec]) -> list[str]:
    """One row per tool: name, arguments with their types, return type, example arguments, description; and, when
    an MCP server serves any of them, a SERVER column after the name ("-" for a Python tool). A header row first."""
    served = any(s.server is not None for s in specs)
    rows = [("NAME", *(["SERVER"] if served else []), "ARGUMENTS", "RETURNS", "EXAMPLE", "DESCRIPTION")]
    for s in specs:
        props = s.input_schema.get("properties") or {}
        required = set(s.input_schema.get("required") or [])
        args = ", ".join(
            f"{name}: {_type(p) if isinstance(p, Mapping) else 'any'}"
            + ("" if name in required or not isinstance(p, Mapping) else f" = {json.dumps(p.get('default'))}")
            for name, p in props.items()
        )
        example = json.dumps(s.example) if s.example else "-"
        server = [s.server or "-"] if served else []
        rows.append((s.name, *server, args or "-", _type(s.output_schema), example, s.description))
    last = len(rows[0]) - 1
    widths = [max(len(r[i]) for r in rows) for i in range(last)]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r[:last], widths, strict=True)) + "  " + r[last] for r in rows]


def _type(schema: Mapping[str, Any]) -> str:
    """A JSON schema as a short type name: string, array of integer, Box, string | null, any."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " | ".join(_type(s) for s in schema["anyOf"])
    if "enum" in schema:
        return "one of " + "|".join(str(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return f"array of {_type(schema.get('items') or {})}"
    if isinstance(kind, list):
        return " | ".join(map(str, kind))
    return str(kind) if kind else "any"
