"""The offline wire checker rejects what the hosted providers reject and accepts what they take."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from wire_rules import (
    ANTHROPIC_STOP_REASONS,
    OPENAI_FINISH_REASONS,
    WIRE,
    anthropic_message_response,
    anthropic_output_schema_problems,
    anthropic_request_problems,
    openai_chat_response,
    openai_request_problems,
    openai_strict_schema_problems,
)

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
OPENAI_BODY: dict[str, Any] = {"model": "gpt-5.4-mini", "messages": MESSAGES}
ANTHROPIC_BODY: dict[str, Any] = {
    "model": "claude-sonnet-5-5",
    "max_tokens": 256,
    "messages": [{"role": "user", "content": "Hi"}],
}
ANSWER_TOOL = {
    "name": "answer",
    "description": "Give the answer.",
    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}

# Closed, every property required (the optional one as nullable), through $defs, items and anyOf: strict-mode legal.
STRICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "pattern": "^[A-Z]"},
        "note": {"type": ["string", "null"]},
        "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
    },
    "required": ["title", "note", "steps"],
    "additionalProperties": False,
    "$defs": {
        "step": {
            "type": "object",
            "properties": {
                "tool": {"type": "string", "enum": ["search", "answer"]},
                "args": {
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {"query": {"type": "string"}},
                            "required": ["query"],
                            "additionalProperties": False,
                        },
                        {"type": "null"},
                    ]
                },
            },
            "required": ["tool", "args"],
            "additionalProperties": False,
        }
    },
}

# What Anthropic structured outputs accept: closed objects, minItems at most 1, no length or range bounds.
CLOSED_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string"},
        "tags": {"type": "array", "minItems": 1, "items": {"type": "string"}},
        "source": {"type": "object", "properties": {"url": {"type": "string"}}, "additionalProperties": False},
    },
    "required": ["summary"],
    "additionalProperties": False,
}


def _json_schema_format(schema: dict[str, Any], *, strict: bool = True) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "plan", "schema": schema, "strict": strict}}


def _anthropic_output_format(schema: dict[str, Any]) -> dict[str, Any]:
    return {"format": {"type": "json_schema", "schema": schema}}


def _schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((WIRE / f"{name}.schema.json").read_text(encoding="utf-8"))
    return schema


def _published_problems(name: str, body: dict[str, Any]) -> list[str]:
    """Errors against the copied schema as published, independent of the builders' own (stricter) check."""
    return [error.message for error in Draft202012Validator(_schema(name)).iter_errors(body)]


# -- OpenAI requests ------------------------------------------------------------------------------------------------


def test_minimal_openai_body_is_accepted() -> None:
    assert openai_request_problems(OPENAI_BODY) == []


def test_openai_current_parameters_are_accepted() -> None:
    body = {
        **OPENAI_BODY,
        "max_completion_tokens": 512,
        "reasoning_effort": "low",
        "stop": ["a", "b", "c", "d"],
        "response_format": _json_schema_format(STRICT_SCHEMA),
        "tools": [{"type": "function", "function": {"name": "answer", "parameters": {"type": "object"}}}],
        "tool_choice": {"type": "function", "function": {"name": "answer"}},
    }
    assert openai_request_problems(body, model="gpt-4.1") == []


def test_openai_unknown_top_level_key_is_rejected_and_named_alone() -> None:
    problems = openai_request_problems({**OPENAI_BODY, "temperature": 3, "max_output_tokens": 5})
    assert any("max_output_tokens" in problem for problem in problems)
    assert any(problem.startswith("$.temperature:") for problem in problems)
    # A failing field must not make its valid siblings look unknown (unevaluatedProperties cascade).
    assert not any("'messages'" in problem for problem in problems)


def test_openai_unknown_message_key_is_rejected() -> None:
    body = {**OPENAI_BODY, "messages": [{"role": "user", "content": "Hi", "tool_call_id": "call_1"}]}
    assert any(p.startswith("$.messages[0]:") and "tool_call_id" in p for p in openai_request_problems(body))


def test_openai_missing_model_is_rejected() -> None:
    assert openai_request_problems({"messages": MESSAGES}) == ["$: 'model' is a required property"]


def test_openai_more_than_four_stop_sequences_are_rejected() -> None:
    body = {**OPENAI_BODY, "stop": ["a", "b", "c", "d", "e"]}
    assert any(p.startswith("$.stop:") for p in openai_request_problems(body, model="gpt-4.1"))


def test_max_tokens_is_rejected_on_hosted_bodies() -> None:
    problems = openai_request_problems({**OPENAI_BODY, "model": "gpt-4.1", "max_tokens": 64})
    assert problems == ["$.max_tokens: deprecated in the OpenAPI document; send max_completion_tokens"]


def test_max_tokens_is_accepted_by_local_servers_for_non_reasoning_models() -> None:
    assert openai_request_problems({**OPENAI_BODY, "model": "gpt-4.1", "max_tokens": 64}, hosted=False) == []


def test_reasoning_model_rejects_max_tokens_even_off_hosted() -> None:
    problems = openai_request_problems({**OPENAI_BODY, "max_tokens": 64}, hosted=False)
    assert any("reasoning model gpt-5.4-mini rejects it" in p for p in problems)


@pytest.mark.parametrize(
    "model", ["o1", "o3-mini", "o3", "o4-mini-2025-04-16", "gpt-5", "gpt-5.4-mini", "gpt-5.2-pro", "gpt-5.1-codex"]
)
def test_reasoning_model_rejects_temperature_other_than_one(model: str) -> None:
    body = {**OPENAI_BODY, "model": model}
    assert any(p.startswith("$.temperature:") for p in openai_request_problems({**body, "temperature": 0}))
    assert openai_request_problems({**body, "temperature": 1}) == []


@pytest.mark.parametrize("model", ["gpt-4.1", "gpt-4o-mini", "gpt-5-chat-latest", "gpt-5.2-chat-latest"])
def test_non_reasoning_models_accept_any_temperature(model: str) -> None:
    assert openai_request_problems({**OPENAI_BODY, "model": model, "temperature": 0}) == []


def test_model_argument_decides_reasoning_rules_over_the_body() -> None:
    body = {**OPENAI_BODY, "model": "local-gguf", "temperature": 0}
    assert openai_request_problems(body) == []
    assert openai_request_problems(body, model="o4-mini") != []


@pytest.mark.parametrize("model", ["o3", "o3-2025-04-16", "o4-mini", "o4-mini-2025-04-16"])
def test_o3_and_o4_mini_reject_stop(model: str) -> None:
    problems = openai_request_problems({**OPENAI_BODY, "model": model, "stop": ["\n"]})
    assert problems == [f"$.stop: {model} rejects stop sequences"]


@pytest.mark.parametrize("model", ["o3-mini", "gpt-5", "gpt-4.1"])
def test_other_models_accept_stop(model: str) -> None:
    assert openai_request_problems({**OPENAI_BODY, "model": model, "stop": ["\n"]}) == []


def test_flat_responses_api_json_schema_format_is_rejected() -> None:
    flat = {"type": "json_schema", "name": "plan", "schema": STRICT_SCHEMA, "strict": True}
    assert openai_request_problems({**OPENAI_BODY, "response_format": flat}) != []


def test_strict_response_format_is_held_to_strict_rules() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    problems = openai_request_problems({**OPENAI_BODY, "response_format": _json_schema_format(schema)})
    assert problems == ["$.response_format.json_schema.schema: object needs additionalProperties: false"]


def test_non_strict_response_format_is_not_held_to_strict_rules() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}}
    assert openai_request_problems({**OPENAI_BODY, "response_format": _json_schema_format(schema, strict=False)}) == []


# -- OpenAI strict schemas ------------------------------------------------------------------------------------------


def test_closed_all_required_schema_is_strict() -> None:
    assert openai_strict_schema_problems(STRICT_SCHEMA) == []


def test_strict_schema_with_an_optional_property_is_rejected() -> None:
    schema = {**STRICT_SCHEMA, "required": ["title", "steps"]}
    assert openai_strict_schema_problems(schema) == ["(root): required must list every property; missing note"]


def test_strict_schema_with_an_open_args_object_is_rejected_at_its_path() -> None:
    step = {
        "type": "object",
        "properties": {"tool": {"type": "string"}, "args": {"type": "object"}},
        "required": ["tool", "args"],
        "additionalProperties": False,
    }
    schema = {**STRICT_SCHEMA, "properties": {**STRICT_SCHEMA["properties"], "steps": {"type": "array", "items": step}}}
    problems = openai_strict_schema_problems(schema)
    assert "properties.steps.items.properties.args: object without properties cannot be strict" in problems
    assert "properties.steps.items.properties.args: object needs additionalProperties: false" in problems


def test_strict_schema_with_max_length_is_rejected() -> None:
    schema = {
        **STRICT_SCHEMA,
        "properties": {**STRICT_SCHEMA["properties"], "title": {"type": "string", "maxLength": 80}},
    }
    assert openai_strict_schema_problems(schema) == [
        "properties.title: string keyword maxLength is not supported in strict mode (only pattern and format)"
    ]


def test_strict_rules_reach_into_defs_and_anyof_branches() -> None:
    schema = json.loads(json.dumps(STRICT_SCHEMA))
    del schema["$defs"]["step"]["properties"]["args"]["anyOf"][0]["additionalProperties"]
    assert openai_strict_schema_problems(schema) == [
        "$defs.step.properties.args.anyOf.0: object needs additionalProperties: false"
    ]


@pytest.mark.parametrize("keyword", ["allOf", "oneOf", "not", "if"])
def test_strict_schema_rejects_unsupported_combinators(keyword: str) -> None:
    schema = {**STRICT_SCHEMA, keyword: [{"type": "object"}] if keyword.endswith("Of") else {"type": "object"}}
    assert any(p.startswith(f"(root): {keyword} is not supported") for p in openai_strict_schema_problems(schema))


# -- Anthropic requests ---------------------------------------------------------------------------------------------


def test_minimal_anthropic_body_is_accepted() -> None:
    assert anthropic_request_problems(ANTHROPIC_BODY) == []


def test_anthropic_current_parameters_are_accepted() -> None:
    body = {
        **ANTHROPIC_BODY,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "stop_sequences": ["\n\n"],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [ANSWER_TOOL],
        "tool_choice": {"type": "auto"},
        "metadata": {"user_id": "u-1"},
        "output_config": {"effort": "low", **_anthropic_output_format(CLOSED_OUTPUT_SCHEMA)},
    }
    assert anthropic_request_problems(body) == []


@pytest.mark.parametrize(("key", "value"), [("temperature", 0.0), ("top_p", 0.9), ("top_k", 40)])
def test_anthropic_sampling_parameters_are_rejected(key: str, value: float) -> None:
    problems = anthropic_request_problems({**ANTHROPIC_BODY, key: value})
    assert len(problems) == 1
    assert problems[0].startswith(f"$.{key}: removed in anthropic-version 2026-10-21")


def test_anthropic_unknown_top_level_key_is_rejected() -> None:
    problems = anthropic_request_problems({**ANTHROPIC_BODY, "response_format": {"type": "json_object"}})
    assert problems == ["$: Additional properties are not allowed ('response_format' was unexpected)"]


def test_anthropic_unknown_tool_key_is_rejected() -> None:
    body = {**ANTHROPIC_BODY, "tools": [{**ANSWER_TOOL, "parameters": {}}]}
    assert any(p.startswith("$.tools[0]:") and "parameters" in p for p in anthropic_request_problems(body))


def test_anthropic_streaming_body_is_outside_the_non_streaming_schema() -> None:
    assert anthropic_request_problems({**ANTHROPIC_BODY, "stream": True}) == ["$.stream: False was expected"]


@pytest.mark.parametrize("choice", [{"type": "tool", "name": "answer"}, {"type": "any"}])
@pytest.mark.parametrize("thinking", [{"type": "enabled", "budget_tokens": 1024}, {"type": "adaptive"}])
def test_forced_tool_with_thinking_is_rejected(choice: dict[str, Any], thinking: dict[str, Any]) -> None:
    body = {**ANTHROPIC_BODY, "tools": [ANSWER_TOOL], "tool_choice": choice, "thinking": thinking}
    problems = anthropic_request_problems(body)
    assert problems == [f"$.tool_choice: a forced tool ({choice['type']}) is rejected while thinking is on"]


def test_forced_tool_is_rejected_by_always_thinking_models() -> None:
    body = {**ANTHROPIC_BODY, "tools": [ANSWER_TOOL], "tool_choice": {"type": "tool", "name": "answer"}}
    assert anthropic_request_problems(body) == []
    assert anthropic_request_problems(body, thinking_model=True) != []


def test_forced_tool_with_thinking_disabled_is_accepted() -> None:
    body = {
        **ANTHROPIC_BODY,
        "tools": [ANSWER_TOOL],
        "tool_choice": {"type": "any"},
        "thinking": {"type": "disabled"},
    }
    assert anthropic_request_problems(body) == []


def test_output_config_schema_is_held_to_structured_output_rules() -> None:
    schema = {**CLOSED_OUTPUT_SCHEMA, "properties": {"summary": {"type": "string", "maxLength": 200}}}
    problems = anthropic_request_problems({**ANTHROPIC_BODY, "output_config": _anthropic_output_format(schema)})
    assert problems == [
        "$.output_config.format.schema.properties.summary: maxLength is not supported in structured outputs"
    ]


# -- Anthropic output schemas ---------------------------------------------------------------------------------------


def test_closed_output_schema_is_accepted() -> None:
    assert anthropic_output_schema_problems(CLOSED_OUTPUT_SCHEMA) == []


@pytest.mark.parametrize(
    ("bounded", "keyword"),
    [
        ({"type": "string", "minLength": 1}, "minLength"),
        ({"type": "string", "maxLength": 200}, "maxLength"),
        ({"type": "integer", "minimum": 0}, "minimum"),
        ({"type": "number", "maximum": 1}, "maximum"),
        ({"type": "integer", "exclusiveMinimum": 0}, "exclusiveMinimum"),
        ({"type": "number", "exclusiveMaximum": 1}, "exclusiveMaximum"),
        ({"type": "integer", "multipleOf": 5}, "multipleOf"),
        ({"type": "array", "maxItems": 12, "items": {"type": "string"}}, "maxItems"),
        ({"type": "array", "uniqueItems": True, "items": {"type": "string"}}, "uniqueItems"),
        (
            {"type": "object", "minProperties": 1, "properties": {"a": {}}, "additionalProperties": False},
            "minProperties",
        ),
        (
            {"type": "object", "maxProperties": 3, "properties": {"a": {}}, "additionalProperties": False},
            "maxProperties",
        ),
    ],
)
def test_output_schema_bounds_are_rejected(bounded: dict[str, Any], keyword: str) -> None:
    schema = {**CLOSED_OUTPUT_SCHEMA, "properties": {"summary": bounded}}
    assert anthropic_output_schema_problems(schema) == [
        f"properties.summary: {keyword} is not supported in structured outputs"
    ]


def test_output_schema_min_items_above_one_is_rejected() -> None:
    tags = {"type": "array", "minItems": 2, "items": {"type": "string"}}
    schema = {**CLOSED_OUTPUT_SCHEMA, "properties": {"tags": tags}}
    assert anthropic_output_schema_problems(schema) == [
        "properties.tags: minItems above 1 is not supported in structured outputs (got 2)"
    ]


def test_output_schema_recursion_is_rejected() -> None:
    node = {
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        "additionalProperties": False,
    }
    assert anthropic_output_schema_problems({"$ref": "#/$defs/node", "$defs": {"node": node}}) == [
        "$defs.node: recursive schemas are not supported in structured outputs"
    ]
    leaf = {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": False}
    assert anthropic_output_schema_problems({"$ref": "#/$defs/leaf", "$defs": {"leaf": leaf}}) == []


def test_output_schema_nullable_must_be_an_any_of_with_a_null_branch() -> None:
    listed = {**CLOSED_OUTPUT_SCHEMA, "properties": {"summary": {"type": ["string", "null"]}}}
    assert anthropic_output_schema_problems(listed) == [
        "properties.summary: a nullable field must be anyOf with a null branch, not the type list ['string', 'null']"
    ]
    branched = {**CLOSED_OUTPUT_SCHEMA, "properties": {"summary": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}
    assert anthropic_output_schema_problems(branched) == []


def test_a_strict_tool_is_held_to_structured_output_rules_and_a_plain_one_is_not() -> None:
    bounded = {**ANSWER_TOOL["input_schema"], "properties": {"text": {"type": "string", "maxLength": 9}}}
    tool = {**ANSWER_TOOL, "input_schema": {**bounded, "additionalProperties": False}}
    assert anthropic_request_problems({**ANTHROPIC_BODY, "tools": [tool]}) == []
    assert anthropic_request_problems({**ANTHROPIC_BODY, "tools": [{**tool, "strict": True}]}) == [
        "$.tools[0].input_schema.properties.text: maxLength is not supported in structured outputs"
    ]


def test_output_schema_open_object_is_rejected_at_its_path() -> None:
    schema = {**CLOSED_OUTPUT_SCHEMA, "properties": {"source": {"type": "object", "properties": {"url": {}}}}}
    assert anthropic_output_schema_problems(schema) == ["properties.source: object needs additionalProperties: false"]
    assert anthropic_output_schema_problems({"type": "object"}) == ["(root): object needs additionalProperties: false"]


# -- responses ------------------------------------------------------------------------------------------------------


def test_documented_reasons_are_the_schemas_own() -> None:
    openai_choice = _schema("openai_chat_response")["$defs"]["CreateChatCompletionResponse"]["properties"]["choices"]
    assert tuple(openai_choice["items"]["properties"]["finish_reason"]["enum"]) == OPENAI_FINISH_REASONS
    anthropic_reason = _schema("anthropic_message_response")["properties"]["stop_reason"]["anyOf"][0]
    assert tuple(anthropic_reason["enum"]) == ANTHROPIC_STOP_REASONS


@pytest.mark.parametrize("finish_reason", OPENAI_FINISH_REASONS)
def test_openai_chat_response_validates(finish_reason: str) -> None:
    body = openai_chat_response(content="Hello", finish_reason=finish_reason, cached_tokens=4)
    assert _published_problems("openai_chat_response", body) == []
    assert body["choices"][0]["message"]["content"] == "Hello"
    assert body["usage"] == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 4, "audio_tokens": 0},
    }


def test_openai_chat_response_carries_refusals_and_tool_calls() -> None:
    refused = openai_chat_response(content=None, refusal="I can't help with that.")
    assert refused["choices"][0]["message"]["refusal"] == "I can't help with that."
    call = {"id": "call_1", "type": "function", "function": {"name": "answer", "arguments": '{"text": "hi"}'}}
    called = openai_chat_response(content=None, finish_reason="tool_calls", tool_calls=[call])
    assert _published_problems("openai_chat_response", called) == []
    assert called["choices"][0]["message"]["tool_calls"] == [call]


@pytest.mark.parametrize("finish_reason", ["end_turn", "max_tokens", "refusal"])
def test_openai_chat_response_rejects_an_unknown_finish_reason(finish_reason: str) -> None:
    with pytest.raises(AssertionError, match="finish_reason"):
        openai_chat_response(content="Hello", finish_reason=finish_reason)


def test_openai_chat_response_rejects_a_malformed_tool_call() -> None:
    with pytest.raises(AssertionError, match="arguments"):
        openai_chat_response(content=None, tool_calls=[{"id": "c", "type": "function", "function": {"name": "f"}}])


@pytest.mark.parametrize("stop_reason", [*ANTHROPIC_STOP_REASONS, None])
def test_anthropic_message_response_validates(stop_reason: str | None) -> None:
    blocks: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": "Look it up.", "signature": "sig-1"},
        {"type": "text", "text": "Calling the tool."},
        {"type": "tool_use", "id": "toolu_1", "name": "answer", "input": {"text": "hi"}},
    ]
    body = anthropic_message_response(blocks=blocks, stop_reason=stop_reason, cache_read_input_tokens=7)
    assert _published_problems("anthropic_message_response", body) == []
    assert body["content"] == blocks
    assert body["usage"] == {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 7}


@pytest.mark.parametrize("stop_reason", ["stop", "length", "tool_calls", "max_output_tokens"])
def test_anthropic_message_response_rejects_an_unknown_stop_reason(stop_reason: str) -> None:
    with pytest.raises(AssertionError, match="stop_reason"):
        anthropic_message_response(blocks=[{"type": "text", "text": "Hi"}], stop_reason=stop_reason)


@pytest.mark.parametrize(
    "block",
    [
        {"type": "thinking", "thinking": "unsigned"},
        {"type": "tool_use", "name": "answer", "input": {}},
        {"type": "text", "text": "Hi", "confidence": 0.9},
        {"type": "output_text", "text": "Hi"},
    ],
)
def test_anthropic_message_response_rejects_malformed_or_invented_blocks(block: dict[str, Any]) -> None:
    with pytest.raises(AssertionError, match=r"\$\.content\[0\]"):
        anthropic_message_response(blocks=[block])
