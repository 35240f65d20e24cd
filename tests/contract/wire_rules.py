"""Offline checks of LLM request and response bodies against the hosted providers' published contracts (see wire/).

Response values the schemas allow (the builders reject anything else):
OpenAI ``finish_reason``: stop, length, tool_calls, content_filter, function_call.
Anthropic ``stop_reason``: end_turn, max_tokens, stop_sequence, tool_use, pause_turn, refusal,
model_context_window_exceeded (or null).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

WIRE = Path(__file__).resolve().parent / "wire"

OPENAI_FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "function_call")
ANTHROPIC_STOP_REASONS = (
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
)

# Only the 2023-06-01 API version types these; newer models reject them even there, so none may be sent.
ANTHROPIC_LEGACY_SAMPLING = ("temperature", "top_p", "top_k")
_FORCED_TOOL_CHOICES = frozenset({"tool", "any"})
_THINKING_ON = frozenset({"enabled", "adaptive"})

_OPENAI_FORBIDDEN_COMBINATORS = ("allOf", "oneOf", "not", "if", "then", "else")
# JSON Schema's string keywords minus the two strict mode supports (pattern, format).
_OPENAI_UNSUPPORTED_STRING_KEYWORDS = ("minLength", "maxLength", "contentEncoding", "contentMediaType", "contentSchema")
# Refused by Anthropic's structured-output grammar compiler (wire/README.md), besides minItems above 1.
_ANTHROPIC_UNSUPPORTED_KEYWORDS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
)

_REASONING_MODEL = re.compile(r"^(?:o[134]|gpt-5)(?:$|[.-])")
_STOPLESS_MODEL = re.compile(r"^(?:o3|o4-mini)(?:-\d{4}-\d{2}-\d{2})?$")
_MAX_PROBLEM_CHARS = 300


# -- validators -----------------------------------------------------------------------------------------------------


def _load(name: str) -> dict[str, Any]:
    with (WIRE / f"{name}.schema.json").open(encoding="utf-8") as f:
        schema: dict[str, Any] = json.load(f)
    return schema


@cache
def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(_load(name))


@cache
def _closed_validator(name: str) -> Draft202012Validator:
    # The response schemas are open (the APIs add fields over time); a built fake body must use only documented fields.
    return Draft202012Validator(_close_objects(_load(name)))


def _close_objects(node: Any) -> Any:
    if isinstance(node, list):
        return [_close_objects(item) for item in node]
    if not isinstance(node, dict):
        return node
    closed = {key: _close_objects(value) for key, value in node.items()}
    # Only objects that declare their properties: a free-form map (tool input, metadata) stays open.
    if isinstance(node.get("properties"), dict) and node.get("additionalProperties", True) is True:
        closed["additionalProperties"] = False
    return closed


def _leaf_errors(error: ValidationError) -> list[ValidationError]:
    # A failed anyOf/oneOf only says "not valid under any": report the branch that came closest, which for the
    # role- or type-discriminated unions is the one the body meant.
    if error.validator in ("anyOf", "oneOf") and error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        near = [errors for errors in branches.values() if not _other_alternative(errors)]
        if not near:
            return [error]  # no alternative fits at all (an unknown role or block type): say so
        closest = min(near, key=len)
        return [leaf for sub in closest for leaf in _leaf_errors(sub)]
    return [error]


def _other_alternative(errors: list[ValidationError]) -> bool:
    """Whether a union branch failed because the body is another alternative (wrong type, role or block type)."""
    return any(
        (error.validator == "type" and not error.relative_path)
        or (error.validator in ("const", "enum") and list(error.relative_path) in (["type"], ["role"]))
        for error in errors
    )


def _declared_properties(node: Mapping[str, Any], root: Mapping[str, Any]) -> set[str]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _declared_properties(root["$defs"][ref.removeprefix("#/$defs/")], root)
    names = set(node.get("properties", {}))
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(key, []):
            names |= _declared_properties(sub, root)
    return names


def _unevaluated_message(error: ValidationError, root: Any) -> str | None:
    # unevaluatedProperties counts only what a *passing* subschema evaluated, so one bad field makes every field of
    # its allOf branch "unexpected": keep only the keys no subschema declares.
    if not isinstance(error.schema, Mapping) or not isinstance(error.instance, Mapping):
        return error.message
    declared = _declared_properties(error.schema, root)
    unknown = [key for key in error.instance if key not in declared]
    return f"unknown properties are not allowed ({', '.join(map(repr, unknown))})" if unknown else None


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_PROBLEM_CHARS else text[: _MAX_PROBLEM_CHARS - 1] + "…"


def _schema_problems(validator: Draft202012Validator, body: Any) -> list[str]:
    problems = []
    for error in sorted(validator.iter_errors(body), key=lambda e: list(map(str, e.absolute_path))):
        for leaf in _leaf_errors(error):
            message: str | None = leaf.message
            if leaf.validator == "unevaluatedProperties":
                message = _unevaluated_message(leaf, validator.schema)
            if message is not None:
                problems.append(_one_line(f"{leaf.json_path}: {message}"))
    return list(dict.fromkeys(problems))


# -- schema walking -------------------------------------------------------------------------------------------------


def _join(path: str, *parts: str | int) -> str:
    return ".".join([path, *map(str, parts)]) if path else ".".join(map(str, parts))


def _subschemas(path: str, node: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    for key in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"):
        children = node.get(key)
        if isinstance(children, Mapping):
            for name, child in children.items():
                yield _join(path, key, name), child
    for key in ("anyOf", "allOf", "oneOf", "prefixItems"):
        children = node.get(key)
        if isinstance(children, list):
            for index, child in enumerate(children):
                yield _join(path, key, index), child
    items = node.get("items")
    if isinstance(items, list):
        for index, child in enumerate(items):
            yield _join(path, "items", index), child
    for key in ("items", "additionalProperties", "not", "if", "then", "else", "contains", "unevaluatedProperties"):
        child = node.get(key)
        if isinstance(child, Mapping):
            yield _join(path, key), child


def _walk(schema: Any, path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every (path, subschema) of a JSON Schema, the root first; boolean schemas are skipped."""
    if not isinstance(schema, Mapping):
        return
    yield path, schema
    for child_path, child in _subschemas(path, schema):
        yield from _walk(child, child_path)


def _is_object_schema(node: Mapping[str, Any]) -> bool:
    declared = node.get("type")
    types = declared if isinstance(declared, list) else [declared]
    return "object" in types or "properties" in node


def _where(path: str) -> str:
    return path or "(root)"


# -- OpenAI ---------------------------------------------------------------------------------------------------------


def _model_name(name: str) -> str:
    # Fine-tunes are named ft:<base>:<org>:...; the base decides what the model accepts.
    return name.split(":")[1] if name.startswith("ft:") and ":" in name[3:] else name


def is_openai_reasoning_model(model: str) -> bool:
    """o-series (o1*, o3*, o4*) and the gpt-5 family, except the non-reasoning ``*-chat*`` variants."""
    name = _model_name(model)
    return bool(_REASONING_MODEL.match(name)) and "-chat" not in name


def openai_strict_schema_problems(schema: Mapping[str, Any]) -> list[str]:
    """Why OpenAI strict structured outputs would refuse ``schema`` ("Invalid schema for response_format"), by path.

    Every object needs ``additionalProperties: false``, declared properties, and all of them in ``required``; no
    ``allOf``/``oneOf``/``not``/``if``/``then``/``else``; of the string keywords only ``pattern`` and ``format``.
    """
    return _openai_strict_problems(schema, "")


def _openai_strict_problems(schema: Mapping[str, Any], base: str) -> list[str]:
    problems = []
    for path, node in _walk(schema, base):
        where = _where(path)
        if _is_object_schema(node):
            properties = node.get("properties")
            if not properties:
                problems.append(f"{where}: object without properties cannot be strict")
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: object needs additionalProperties: false")
            if isinstance(properties, Mapping):
                required = node.get("required")
                listed = set(required) if isinstance(required, list) else set()
                # An optional field is spelled as a required one whose type allows null.
                missing = [name for name in properties if name not in listed]
                if missing:
                    problems.append(f"{where}: required must list every property; missing {', '.join(missing)}")
        problems.extend(
            f"{where}: {key} is not supported in strict mode" for key in _OPENAI_FORBIDDEN_COMBINATORS if key in node
        )
        problems.extend(
            f"{where}: string keyword {key} is not supported in strict mode (only pattern and format)"
            for key in _OPENAI_UNSUPPORTED_STRING_KEYWORDS
            if key in node
        )
    return problems


def openai_request_problems(body: Mapping[str, Any], *, model: str | None = None, hosted: bool = True) -> list[str]:
    """Why OpenAI's hosted Chat Completions API would refuse ``body``; empty when it is accepted.

    Checks the published request schema, then the documented rules it cannot express: ``max_tokens`` is deprecated
    (``hosted``), a strict ``json_schema`` response format follows the strict structured-outputs rules, and reasoning
    models (decided from ``model``, else ``body["model"]``) refuse ``max_tokens``, a ``temperature`` other than 1, and
    for o3 / o4-mini ``stop``. Unsupported parameters count when present at all; a null temperature counts as unset.
    """
    problems = _schema_problems(_validator("openai_chat_request"), body)
    if hosted and "max_tokens" in body:
        problems.append("$.max_tokens: deprecated in the OpenAPI document; send max_completion_tokens")
    response_format = body.get("response_format")
    if isinstance(response_format, Mapping) and response_format.get("type") == "json_schema":
        json_schema = response_format.get("json_schema")
        if isinstance(json_schema, Mapping) and json_schema.get("strict") is True:
            schema = json_schema.get("schema")
            if isinstance(schema, Mapping):
                problems.extend(_openai_strict_problems(schema, "$.response_format.json_schema.schema"))
            else:
                problems.append("$.response_format.json_schema: strict needs a schema")
    name = model if model is not None else body.get("model")
    if isinstance(name, str) and is_openai_reasoning_model(name):
        if "max_tokens" in body:
            problems.append(f"$.max_tokens: reasoning model {name} rejects it; send max_completion_tokens")
        temperature = body.get("temperature")
        if temperature is not None and temperature != 1:
            problems.append(f"$.temperature: reasoning model {name} accepts only 1, got {temperature!r}")
        if "stop" in body and _STOPLESS_MODEL.match(_model_name(name)):
            problems.append(f"$.stop: {name} rejects stop sequences")
    return problems


# -- Anthropic ------------------------------------------------------------------------------------------------------


def anthropic_output_schema_problems(schema: Mapping[str, Any]) -> list[str]:
    """Why Anthropic native structured outputs (``output_config.format.schema``) would refuse ``schema``, by path.

    The numeric, length and count bounds (``minimum`` … ``maxProperties``), ``minItems`` above 1 and recursive
    ``$ref``s are refused; every object needs ``additionalProperties: false``; a nullable field is ``anyOf`` with a
    ``{"type": "null"}`` branch, not a type list.
    """
    return _anthropic_output_problems(schema, "")


def _recursive_defs(schema: Mapping[str, Any]) -> list[str]:
    defs = schema.get("$defs")
    if not isinstance(defs, Mapping):
        return []
    edges = {name: _def_refs(node) for name, node in defs.items()}
    recursive = []
    for start in edges:
        seen: set[str] = set()
        stack = list(edges[start])
        while stack:
            name = stack.pop()
            if name == start:
                recursive.append(start)
                break
            if name not in seen:
                seen.add(name)
                stack.extend(edges.get(name, ()))
    return recursive


def _def_refs(node: Any) -> set[str]:
    if isinstance(node, list):
        return set().union(*map(_def_refs, node)) if node else set()
    if not isinstance(node, Mapping):
        return set()
    ref = node.get("$ref")
    own = {ref.removeprefix("#/$defs/")} if isinstance(ref, str) and ref.startswith("#/$defs/") else set()
    return own.union(*map(_def_refs, node.values()))


def _anthropic_output_problems(schema: Mapping[str, Any], base: str) -> list[str]:
    problems = [
        f"{_where(_join(base, '$defs', name))}: recursive schemas are not supported in structured outputs"
        for name in _recursive_defs(schema)
    ]
    for path, node in _walk(schema, base):
        where = _where(path)
        if _is_object_schema(node) and node.get("additionalProperties") is not False:
            problems.append(f"{where}: object needs additionalProperties: false")
        problems.extend(
            f"{where}: {key} is not supported in structured outputs"
            for key in _ANTHROPIC_UNSUPPORTED_KEYWORDS
            if key in node
        )
        min_items = node.get("minItems")
        if isinstance(min_items, int) and min_items > 1:
            problems.append(f"{where}: minItems above 1 is not supported in structured outputs (got {min_items})")
        types = node.get("type")
        if isinstance(types, list) and "null" in types:
            problems.append(f"{where}: a nullable field must be anyOf with a null branch, not the type list {types}")
    return problems


def anthropic_request_problems(body: Mapping[str, Any], *, thinking_model: bool = False) -> list[str]:
    """Why Anthropic's Messages API would refuse ``body``; empty when it is accepted.

    Checks the published (closed) request schema, then the documented rules it cannot express: no ``temperature`` /
    ``top_p`` / ``top_k``; no forced tool (``tool_choice`` type ``tool`` or ``any``) with thinking on in the body or on
    an always-thinking model (``thinking_model``); ``output_config.format.schema`` and a strict tool's
    ``input_schema`` follow the structured-outputs rules.
    """
    # The legacy keys get their own message below rather than the schema's generic "unexpected property".
    rest = {key: value for key, value in body.items() if key not in ANTHROPIC_LEGACY_SAMPLING}
    problems = _schema_problems(_validator("anthropic_messages_request"), rest)
    problems.extend(
        f"$.{key}: removed in anthropic-version 2026-10-21 and rejected by newer models even under 2023-06-01"
        for key in ANTHROPIC_LEGACY_SAMPLING
        if key in body
    )
    tool_choice = body.get("tool_choice")
    if isinstance(tool_choice, Mapping) and tool_choice.get("type") in _FORCED_TOOL_CHOICES:
        thinking = body.get("thinking")
        if isinstance(thinking, Mapping) and thinking.get("type") in _THINKING_ON:
            problems.append(f"$.tool_choice: a forced tool ({tool_choice['type']}) is rejected while thinking is on")
        elif thinking_model:
            problems.append(
                f"$.tool_choice: a forced tool ({tool_choice['type']}) is rejected by always-thinking models"
            )
    output_config = body.get("output_config")
    output_format = output_config.get("format") if isinstance(output_config, Mapping) else None
    if isinstance(output_format, Mapping) and isinstance(output_format.get("schema"), Mapping):
        problems.extend(_anthropic_output_problems(output_format["schema"], "$.output_config.format.schema"))
    for index, tool in enumerate(body.get("tools") or []):
        # A strict tool's input schema is compiled by the same grammar as structured outputs.
        if isinstance(tool, Mapping) and tool.get("strict") is True and isinstance(tool.get("input_schema"), Mapping):
            problems.extend(_anthropic_output_problems(tool["input_schema"], f"$.tools[{index}].input_schema"))
    return problems


# -- response builders ----------------------------------------------------------------------------------------------


def _checked(name: str, body: dict[str, Any]) -> dict[str, Any]:
    problems = _schema_problems(_closed_validator(name), body)
    if problems:
        raise AssertionError(f"built body does not match {name}.schema.json:\n" + "\n".join(problems))
    return body


def openai_chat_response(
    *,
    content: str | None,
    finish_reason: str = "stop",
    refusal: str | None = None,
    model: str = "gpt-5.4-mini",
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    cached_tokens: int | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A Chat Completions response body with one choice, checked against the response schema (documented fields only).

    ``tool_calls`` items look like ``{"id": "call_1", "type": "function", "function": {"name": ..., "arguments":
    "<json>"}}``. Raises AssertionError when the result does not validate (an unknown ``finish_reason``, say).
    """
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal, "annotations": []}
    if tool_calls is not None:
        message["tool_calls"] = copy.deepcopy(tool_calls)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens, "audio_tokens": 0}
    body = {
        "id": "chatcmpl-wire0001",
        "object": "chat.completion",
        "created": 1767225600,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "usage": usage,
        "service_tier": "default",
    }
    return _checked("openai_chat_response", body)


def anthropic_message_response(
    *,
    blocks: list[dict[str, Any]],
    stop_reason: str | None = "end_turn",
    model: str = "claude-sonnet-5-5",
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_read_input_tokens: int | None = None,
) -> dict[str, Any]:
    """A Messages API response body, checked against the response schema (documented fields only).

    ``blocks`` are content blocks: ``{"type": "text", "text": ...}``, ``{"type": "tool_use", "id": ..., "name": ...,
    "input": {...}}``, ``{"type": "thinking", "thinking": ..., "signature": ...}``, ``{"type": "redacted_thinking",
    "data": ...}``. Raises AssertionError when the result does not validate (an unknown ``stop_reason``, a block
    missing a required field, an undocumented field).
    """
    usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if cache_read_input_tokens is not None:
        usage["cache_read_input_tokens"] = cache_read_input_tokens
    body = {
        "id": "msg_wire0001",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": copy.deepcopy(blocks),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }
    return _checked("anthropic_message_response", body)
