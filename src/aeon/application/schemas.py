"""JSON-schema checks that report one line per problem: where (a path), and what, never the whole value."""

from __future__ import annotations

import functools
import json
import keyword
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    import jsonschema

    from aeon.application.ports import ToolPort
    from aeon.domain.tools import ToolSpec


class _Checks(msgspec.Struct):
    schema: Mapping[str, Any]  # held, so that its id is not reused while the entry lives
    fast: Any  # a msgspec type that accepts only what the schema accepts, or None
    compiled: Any = None  # jsonschema's validator, built (jsonschema imported) when the fast type cannot decide

    @property
    def validator(self) -> jsonschema.Draft202012Validator:
        if self.compiled is None:
            import jsonschema

            self.compiled = jsonschema.Draft202012Validator(self.schema)
        validator: jsonschema.Draft202012Validator = self.compiled
        return validator


_CHECKS: dict[int, _Checks] = {}
# Keywords that never change what a schema accepts.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "deprecated"})
_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "null": type(None)}


def _checks(schema: Mapping[str, Any]) -> _Checks:
    """One compiled validator per schema object (tool schemas are checked on every step); bounded cache."""
    hit = _CHECKS.get(id(schema))
    if hit is not None and hit.schema is schema:
        return hit
    if len(_CHECKS) > 256:
        _CHECKS.clear()
    checks = _Checks(schema, _fast_type(schema))
    _CHECKS[id(schema)] = checks
    return checks


def _fast_type(schema: Any) -> Any:
    """The schema as a msgspec type, for the plain shapes tool schemas mostly take: scalar types (alone, in a type
    list or an anyOf) and objects of named properties. msgspec accepts a subset of what the schema accepts (an int
    where a number is asked, never 5.0 for an integer), checked in C; None for any other keyword or shape."""
    if not isinstance(schema, dict):
        return None
    if not schema.keys() - _ANNOTATIONS:
        return Any  # the empty schema: anything
    kind, rest = schema.get("type"), schema.keys() - _ANNOTATIONS - {"type"}
    if kind == "object" and rest <= {"properties", "required", "additionalProperties"}:
        return _fast_object(schema)
    if rest == {"anyOf"} and kind is None and isinstance(schema["anyOf"], list) and schema["anyOf"]:
        members = [_fast_type(member) for member in schema["anyOf"]]
        return _union(members) if all(m is not None for m in members) else None
    if rest or not isinstance(kind, str | list):
        return None
    kinds = [kind] if isinstance(kind, str) else kind
    if not kinds or not all(isinstance(k, str) and k in _SCALARS for k in kinds):
        return None
    return _union([_SCALARS[k] for k in kinds])


def _union(members: list[Any]) -> Any:
    try:
        kind = functools.reduce(lambda a, b: a | b, members)
        msgspec.json.Decoder(kind)  # msgspec refuses some unions (two kinds of object): then no fast type
    except TypeError:
        return None
    return kind


def _fast_object(schema: Mapping[str, Any]) -> Any:
    properties, required = schema.get("properties", {}), schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not (isinstance(properties, dict) and isinstance(required, list) and isinstance(extra, bool)):
        return None
    if not set(required) <= properties.keys():
        return None
    if not properties:
        return dict[str, Any] if extra else None
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for name, sub in properties.items():
        kind = _fast_type(sub)
        if kind is None or not (name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")):
            return None
        fields.append((name, kind) if name in required else (name, kind | msgspec.UnsetType, msgspec.UNSET))
    try:
        struct = msgspec.defstruct("Arguments", fields, kw_only=True, forbid_unknown_fields=not extra)
        msgspec.json.Decoder(struct)  # msgspec refuses some field types (an anyOf of two objects)
    except TypeError:
        return None
    return struct


def schema_problems(instance: Any, schema: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(json path, message) for every violation, sorted for stable output."""
    checks = _checks(schema)
    if checks.fast is not None:
        try:
            msgspec.convert(instance, checks.fast)
            return []
        except msgspec.ValidationError:
            pass  # the schema decides, and names every problem
    validator = checks.validator
    if validator.is_valid(instance):
        return []
    out = []
    for err in validator.iter_errors(instance):
        path = "/".join(str(p) for p in err.absolute_path) or "(root)"
        out.append((path, _message(err)))
    return sorted(out)


def _message(err: jsonschema.ValidationError) -> str:
    """jsonschema's message, except where it would print the whole offending value (a list of steps, an object)."""
    value, limit = err.instance, err.validator_value
    if err.validator == "maxItems" and isinstance(value, list):
        return f"has {len(value)} items, more than the {limit} allowed"
    if err.validator == "minItems" and isinstance(value, list):
        return "must not be empty" if limit == 1 and not value else f"has {len(value)} items, fewer than {limit}"
    if err.validator == "type":
        expected = " or ".join(limit) if isinstance(limit, list) else str(limit)
        return f"expected {expected}, got {json_kind(value)} {preview(value, 60)}"
    return clip(err.message, 200)


def json_kind(value: Any) -> str:
    """The JSON type name of a JSON value ("object", "string", …)."""
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


# json.dumps(value, default=str) builds an encoder on every call; this one writes the same text.
_JSON_TEXT = json.JSONEncoder(default=str)


def as_text(value: Any) -> str:
    """A string as it is, any other value as its JSON text (an unknown object as its str)."""
    return value if isinstance(value, str) else _JSON_TEXT.encode(value)


def one_line(value: Any, limit: int | None = None) -> str:
    """`as_text`, whitespace runs made one space, clipped to `limit` characters (None: whole)."""
    text = " ".join(as_text(value).split())
    return text if limit is None else clip(text, limit)


def preview(value: Any, limit: int = 80) -> str:
    """A short one-line rendering of a JSON value: a string quoted, anything else as JSON, clipped."""
    return clip(repr(value) if isinstance(value, str) else _JSON_TEXT.encode(value), limit)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def args_problems(spec: ToolSpec, args: Mapping[str, Any]) -> list[str]:
    """Argument problems against the tool's input_schema, as one-line messages."""
    return [
        f"args for tool {spec.name!r} invalid at {path}: {msg}"
        for path, msg in schema_problems(dict(args), spec.input_schema)
    ]


def schema_problem(tools: ToolPort, tool: str, args: dict[str, Any]) -> str | None:
    """Why `args` do not fit `tool`'s input schema, or None: the argument check every step's call gets (the kernel,
    the run use case and the durable record check an edited call with it again)."""
    spec = tools.get(tool)
    if spec is None:
        return f"tool {tool!r} is not registered"
    return "; ".join(args_problems(spec, args)) or None
