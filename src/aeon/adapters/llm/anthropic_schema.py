"""What Anthropic's structured outputs (and strict tools) take of a JSON schema, after the `anthropic` SDK's
`transform_schema`: their grammar compiler refuses numeric, length and count bounds, and wants a nullable field as
`anyOf` with a null branch rather than a type list. The bounds move into the description, where the model reads
them; Aeon's validators check the answer against the schema as written (supervisor), bounds included.
"""

from __future__ import annotations

import json
from typing import Any

# Refused by Anthropic's structured outputs and strict tools ("property 'maxItems' is not supported"), with
# `minItems` above 1; see tests/contract/wire/README.md.
ANTHROPIC_MOVED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
)


def describe_bounds(node: dict[str, Any]) -> None:
    """Move the bounds Anthropic refuses from `node` into its description, so the model still reads them."""
    moved = {k: node.pop(k) for k in ANTHROPIC_MOVED if k in node and not (k == "minItems" and _at_most_one(node[k]))}
    if moved:
        bounds = "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in moved.items()) + "}"
        node["description"] = f"{node.get('description') or ''} {bounds}".strip()


def _at_most_one(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value <= 1


# Keywords that constrain one JSON type only: each anyOf branch keeps those of its own type.
_TYPE_KEYWORDS = {
    "object": {"properties", "required", "additionalProperties", "propertyNames", "patternProperties"},
    "array": {"items", "prefixItems", "minItems", "contains"},
    "string": {"pattern", "format"},
}
_SHARED = ("description", "title", "default", "examples")
_KINDS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "object": (dict,),
    "array": (list,),
}


def type_branches(node: dict[str, Any]) -> dict[str, Any]:
    """`{"type": ["string", "null"], ...}` as Anthropic takes it: `anyOf` with one branch per type."""
    top = {k: node[k] for k in _SHARED if k in node}
    rest = {k: v for k, v in node.items() if k not in _SHARED and k != "type"}
    specific = set().union(*_TYPE_KEYWORDS.values())
    branches = []
    for kind in node["type"]:
        branch = {k: v for k, v in rest.items() if k not in specific or k in _TYPE_KEYWORDS.get(kind, ())}
        if isinstance(branch.get("enum"), list):
            branch["enum"] = [v for v in branch["enum"] if _is_kind(v, kind)]
        branches.append({"type": "null"} if kind == "null" else {"type": kind, **branch})
    return {**top, "anyOf": branches} if len(branches) > 1 else {**top, **branches[0]}


def _is_kind(value: Any, kind: str) -> bool:
    if kind in ("null", "boolean"):
        return value is None if kind == "null" else isinstance(value, bool)
    return isinstance(value, _KINDS.get(kind, ())) and not isinstance(value, bool)
