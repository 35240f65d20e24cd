"""Schema transformers per dialect: Aeon's JSON schemas rewritten into what a provider's structured output accepts.

- `strict` (OpenAI strict mode, after pydantic-ai's OpenAI strict transformer): every object closed and listing every
  property in `required`, optional properties made nullable, keywords strict mode rejects removed.
- `anthropic` (native structured outputs, after the `anthropic` SDK's `transform_schema`): objects closed; every
  bound the grammar compiler refuses (`ANTHROPIC_MOVED`, `minItems` above 1) moved into the description as
  "{maxItems: 12}", for the model to read; type lists with `null` written as `anyOf` with a null branch; a recursive
  `$ref` inlined once, its recursion sent as JSON text. The supervisor's validators check the answer against the
  schema as Aeon wrote it, bounds included, as for every dialect that does not enforce them.
- `grammar` (llama.cpp and other grammar-constrained servers): objects closed and strings bounded, so a small model
  cannot ramble in extra keys or endless strings until the token limit cuts it off.
- `plain`: the schema as written.

An object with no declared properties (tool `args`) cannot be closed, so `strict` and `anthropic` send it as a
string holding JSON; `revert` turns such strings back into objects and drops the nulls that stand for absent optional
fields, so the answer Aeon validates (against the original schema) has the shape it asked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from aeon.adapters.llm.anthropic_schema import describe_bounds, type_branches

Profile = Literal["strict", "anthropic", "grammar", "plain"]

MAX_STRING = 400
ENCODED_OBJECT = "A JSON object encoded as a string."
_STRICT_UNSUPPORTED = frozenset(
    {
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
        "patternProperties",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
        "default",
        "title",
    }
)
_DEF_PREFIX = "#/$defs/"


def _types(node: Mapping[str, Any]) -> set[str]:
    t = node.get("type")
    return {t} if isinstance(t, str) else set(t) if isinstance(t, list) else set()


def is_open_object(node: Mapping[str, Any]) -> bool:
    """An object schema that declares no properties: free-form, so it cannot be closed."""
    return "object" in _types(node) and not node.get("properties")


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    if isinstance(node.get("type"), str):
        node["type"] = [node["type"], "null"]
    elif isinstance(node.get("type"), list) and "null" not in node["type"]:
        node["type"] = [*node["type"], "null"]
    elif "anyOf" in node:
        node["anyOf"] = [*node["anyOf"], {"type": "null"}]
    elif "type" not in node:
        return {"anyOf": [node, {"type": "null"}]}
    if "enum" in node and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]
    return node


def _encoded(node: Mapping[str, Any], what: str = "object") -> dict[str, Any]:
    described = str(node.get("description") or "").strip()
    encoded = ENCODED_OBJECT if what == "object" else f"A JSON {what} encoded as a string."
    return {"type": "string", "description": f"{described} {encoded}".strip()}


def to_wire(schema: Mapping[str, Any], profile: Profile, removed: Iterable[str] = ()) -> dict[str, Any]:
    """`schema` as the dialect's structured output takes it; `removed` are keywords the provider refused this run."""
    drop = frozenset(removed)
    if profile == "strict":
        drop |= _STRICT_UNSUPPORTED
    elif profile == "anthropic":
        schema = _unroll(schema)
    return _walk(schema, profile, drop)


def _walk(node: Mapping[str, Any], profile: Profile, drop: frozenset[str]) -> dict[str, Any]:
    if profile in ("strict", "anthropic") and is_open_object(node):
        return _encoded(node)
    out: dict[str, Any] = {k: v for k, v in node.items() if k not in drop}
    if profile == "anthropic":
        describe_bounds(out)
    if profile == "strict":  # strict mode takes anyOf only
        for key in ("oneOf", "allOf"):
            if key in out:
                out["anyOf"] = [*out.get("anyOf", []), *out.pop(key)]
    props = out.get("properties")
    if isinstance(props, Mapping):
        required = set(out.get("required") or [])
        new: dict[str, Any] = {}
        for name, sub in props.items():
            walked = _walk(sub, profile, drop) if isinstance(sub, Mapping) else sub
            if profile == "strict" and name not in required and isinstance(walked, dict):
                walked = _nullable(walked)
            new[name] = walked
        out["properties"] = new
        if profile == "strict":
            out["required"] = list(new)
        if profile == "grammar":
            out.setdefault("additionalProperties", False)
        elif profile != "plain":
            out["additionalProperties"] = False
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), Mapping):
            out[key] = _walk(out[key], profile, drop)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(out.get(key), list):
            out[key] = [_walk(v, profile, drop) if isinstance(v, Mapping) else v for v in out[key]]
    for key in ("$defs", "definitions"):
        if isinstance(out.get(key), Mapping):
            out[key] = {k: _walk(v, profile, drop) for k, v in out[key].items()}
    if profile == "grammar" and "string" in _types(out) and "enum" not in out:
        out.setdefault("maxLength", MAX_STRING)
    if profile == "anthropic" and isinstance(out.get("type"), list):
        return type_branches(out)
    return out


def _ref_name(node: Any) -> str | None:
    ref = node.get("$ref") if isinstance(node, Mapping) else None
    return ref.removeprefix(_DEF_PREFIX) if isinstance(ref, str) and ref.startswith(_DEF_PREFIX) else None


def _refs(node: Any) -> set[str]:
    """The $defs names `node` refers to, at any depth."""
    found, stack = set(), [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            name = _ref_name(item)
            if name is not None:
                found.add(name)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def recursive_defs(schema: Mapping[str, Any]) -> set[str]:
    """The `$defs` entries that reach themselves through `$ref`s: a recursive schema."""
    defs = schema.get("$defs")
    if not isinstance(defs, Mapping):
        return set()
    edges = {name: _refs(node) for name, node in defs.items()}
    cyclic = set()
    for start in edges:
        seen, stack = set(), list(edges[start])
        while stack:
            name = stack.pop()
            if name == start:
                cyclic.add(start)
                break
            if name not in seen:
                seen.add(name)
                stack.extend(edges.get(name, ()))
    return cyclic


def _unroll(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """`schema` without recursion, which Anthropic refuses: each recursive definition is inlined where it is used,
    and where it would recur the value is asked for as JSON text (`revert` decodes it)."""
    cyclic = recursive_defs(schema)
    if not cyclic:
        return schema
    defs = schema["$defs"]

    def inline(node: Any, stack: tuple[str, ...]) -> Any:
        name = _ref_name(node)
        if name in cyclic:
            target = defs[name]
            if name in stack:
                return _encoded(target, "value")
            siblings = {k: v for k, v in node.items() if k != "$ref"}  # a description next to the $ref, say
            return inline({**{k: v for k, v in target.items() if k != "$defs"}, **siblings}, (*stack, name))
        if isinstance(node, Mapping):
            return {k: inline(v, stack) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v, stack) for v in node]
        return node

    out: dict[str, Any] = inline({k: v for k, v in schema.items() if k != "$defs"}, ())
    kept = {k: inline(v, ()) for k, v in defs.items() if k not in cyclic}
    if kept:
        out["$defs"] = kept
    return out


def revert(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """Undo the wire encoding on an answer: JSON strings where `schema` wants a free-form object (or a recursive
    definition) become values, and nulls standing for absent optional properties are dropped. Anything that does not
    fit is left for validation."""
    root = schema if root is None else root
    name = _ref_name(schema)
    defs = root.get("$defs")
    if name is not None and isinstance(defs, Mapping) and isinstance(defs.get(name), Mapping):
        target = defs[name]
        if isinstance(value, str) and "string" not in _types(target):
            return _decoded(value, (dict, list))
        return revert(value, target, root)
    if isinstance(value, str) and is_open_object(schema):
        return _decoded(value, (dict,))
    if isinstance(value, dict) and isinstance(schema.get("properties"), Mapping):
        props, required = schema["properties"], set(schema.get("required") or [])
        return {
            k: revert(v, props[k], root) if isinstance(props.get(k), Mapping) else v
            for k, v in value.items()
            if not (v is None and k in props and k not in required)
        }
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [revert(v, schema["items"], root) for v in value]
    return value


def _decoded(text: str, kinds: tuple[type, ...]) -> Any:
    try:
        decoded = json.loads(text)
    except ValueError:
        return text
    return decoded if isinstance(decoded, kinds) else text


def revert_text(text: str, schema: Mapping[str, Any]) -> str:
    """`revert` on a JSON answer; text that is not JSON goes back unchanged, for the supervisor to repair."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    reverted = revert(value, schema)
    return text if reverted == value else json.dumps(reverted, ensure_ascii=False)


def schema_keywords(schema: Any) -> set[str]:
    """Every keyword used anywhere in `schema` (property names excluded), to tell which one a provider refused."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            for key, value in node.items():
                if key in ("properties", "$defs", "definitions") and isinstance(value, Mapping):
                    stack.extend(value.values())
                else:
                    found.add(key)
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return found
