"""JSON-schema checks that report one line per problem: where (a path), and what, never the whole value."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsonschema

_VALIDATORS: dict[int, tuple[Mapping[str, Any], jsonschema.Draft202012Validator]] = {}


def _validator(schema: Mapping[str, Any]) -> jsonschema.Draft202012Validator:
    """One compiled validator per schema object (tool schemas are validated on every step); bounded cache."""
    hit = _VALIDATORS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_VALIDATORS) > 256:
        _VALIDATORS.clear()
    validator = jsonschema.Draft202012Validator(schema)
    _VALIDATORS[id(schema)] = (schema, validator)  # keeping the schema keeps its id from being reused
    return validator


def schema_problems(instance: Any, schema: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(json path, message) for every violation, sorted for stable output."""
    validator = _validator(schema)
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


def preview(value: Any, limit: int = 80) -> str:
    """A short one-line rendering of a JSON value: a string quoted, anything else as JSON, clipped."""
    return clip(repr(value) if isinstance(value, str) else json.dumps(value, default=str), limit)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
