"""Every stop and finish reason of both APIs, and every graceful downgrade, on provider-shaped bodies.

Success bodies come from `wire_rules`' builders, which validate them against the published response schemas; error
bodies are the providers' documented error envelopes with the messages they send for these refusals.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from wire_rules import anthropic_message_response, openai_chat_response

from aeon.adapters.llm.anthropic import AnthropicLLM
from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.application.errors import (
    LLMBadResponse,
    LLMContentFiltered,
    LLMContextExceeded,
    LLMEmptyAnswer,
    LLMRefused,
    LLMRejected,
    LLMTruncated,
)
from aeon.domain.llm import Completion, Message

from harness import ListLog, Provider

pytestmark = pytest.mark.block_network
MESSAGES = [Message(role="user", content="Plan it")]
SCHEMA = {
    "type": "object",
    "properties": {"goal": {"type": "string", "minLength": 1}, "args": {"type": "object"}},
    "required": ["goal"],
}


def openai(provider: Provider, *, model: str = "gpt-4.1", dialect: str | None = None, **kw: Any) -> OpenAICompatLLM:
    url = "https://api.openai.com/v1" if dialect is None else "https://llm.example/v1"
    return OpenAICompatLLM(url, model, "sk-test", dialect=dialect, transport=httpx.MockTransport(provider), **kw)


def anthropic(provider: Provider, *, model: str = "claude-haiku-5-5", **kw: Any) -> AnthropicLLM:
    transport = httpx.MockTransport(provider)
    return AnthropicLLM("https://api.anthropic.com", model, "sk-ant-test", transport=transport, **kw)


def calls(llm: Any, n: int = 1, **kw: Any) -> list[Completion]:
    async def go() -> list[Completion]:
        try:
            return [await llm.complete(MESSAGES, **kw) for _ in range(n)]
        finally:
            await llm.aclose()

    return asyncio.run(go())


def ok_openai(text: str = "done", **kw: Any) -> httpx.Response:
    return httpx.Response(200, json=openai_chat_response(content=text, **kw))


def ok_anthropic(*blocks: dict[str, Any], stop_reason: str | None = "end_turn", **kw: Any) -> httpx.Response:
    body = anthropic_message_response(blocks=list(blocks) or [text("done")], stop_reason=stop_reason, **kw)
    return httpx.Response(200, json=body)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


# -- OpenAI finish reasons ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["stop"])
def test_an_openai_answer_that_ended_by_itself_is_returned(reason: str) -> None:
    [answer] = calls(openai(Provider(ok_openai("15", finish_reason=reason, cached_tokens=4))))
    assert (answer.text, answer.finish_reason, answer.usage.cached_tokens) == ("15", "stop", 4)


@pytest.mark.parametrize(
    ("response", "error", "match"),
    [
        (openai_chat_response(content='{"goal": "x', finish_reason="length"), LLMTruncated, "token limit"),
        (openai_chat_response(content=None, finish_reason="content_filter"), LLMContentFiltered, "content filter"),
        (openai_chat_response(content=None, refusal="I can't help with that."), LLMRefused, "can't help"),
        (
            openai_chat_response(
                content=None,
                finish_reason="tool_calls",
                tool_calls=[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            ),
            LLMBadResponse,
            "tool call",
        ),
        (openai_chat_response(content="", finish_reason="stop"), LLMEmptyAnswer, "empty"),
        (openai_chat_response(content=None, finish_reason="stop"), LLMEmptyAnswer, "empty"),
    ],
    ids=["length", "content_filter", "refusal", "tool_calls", "empty_text", "null_content"],
)
def test_every_other_openai_ending_is_its_own_error(response: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match) as caught:
        calls(openai(Provider(httpx.Response(200, json=response))))
    assert type(caught.value) is error  # distinct, not just some LLMError
    if error is LLMTruncated:
        assert caught.value.usage is not None and caught.value.usage.completion_tokens == 5


# -- Anthropic stop reasons -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["end_turn", "stop_sequence", None])
def test_an_anthropic_answer_that_ended_by_itself_is_returned(reason: str | None) -> None:
    [answer] = calls(anthropic(Provider(ok_anthropic(text('{"goal": "sum"}'), stop_reason=reason))), schema=SCHEMA)
    assert json.loads(answer.text) == {"goal": "sum"} and answer.finish_reason == reason


@pytest.mark.parametrize(
    ("blocks", "reason", "error", "match"),
    [
        ([text('{"goal": ')], "max_tokens", LLMTruncated, "token limit"),
        ([text("Let me")], "model_context_window_exceeded", LLMContextExceeded, "context window"),
        ([], "refusal", LLMRefused, "refused"),
        ([{"type": "thinking", "thinking": "hmm", "signature": "s"}], "end_turn", LLMEmptyAnswer, "empty"),
        ([], "end_turn", LLMEmptyAnswer, "empty"),
        ([{"type": "tool_use", "id": "t1", "name": "x", "input": {}}], "tool_use", LLMBadResponse, "tool call"),
    ],
    ids=["max_tokens", "context_window", "refusal", "only_thinking", "no_blocks", "unasked_tool_use"],
)
def test_every_other_anthropic_ending_is_its_own_error(
    blocks: list[dict[str, Any]], reason: str, error: type, match: str
) -> None:
    body = anthropic_message_response(blocks=blocks, stop_reason=reason)
    with pytest.raises(error, match=match) as caught:
        calls(anthropic(Provider(httpx.Response(200, json=body))))
    assert type(caught.value) is error


def test_thinking_blocks_are_not_part_of_the_answer() -> None:
    thought = {"type": "thinking", "thinking": "The user wants JSON.", "signature": "sig"}
    [answer] = calls(anthropic(Provider(ok_anthropic(thought, text('{"goal": "g"}')))), schema=SCHEMA)
    assert answer.text == '{"goal": "g"}'


def test_a_paused_turn_is_continued_and_the_pieces_make_one_answer() -> None:
    provider = Provider(
        ok_anthropic(text('{"goal": '), stop_reason="pause_turn", input_tokens=10, output_tokens=3),
        ok_anthropic(text('"sum"}'), stop_reason="end_turn", input_tokens=14, output_tokens=2),
    )
    [answer] = calls(anthropic(provider), schema=SCHEMA)
    assert answer.text == '{"goal": "sum"}'
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (24, 5)  # both requests counted
    resumed = provider.bodies[1]["messages"]
    assert resumed[-1] == {"role": "assistant", "content": [text('{"goal": ')]}  # the partial turn, sent back


def test_a_turn_that_keeps_pausing_ends_as_a_bad_response() -> None:
    provider = Provider(*[ok_anthropic(text("."), stop_reason="pause_turn") for _ in range(4)])
    with pytest.raises(LLMBadResponse, match="paused its turn 4 times"):
        calls(anthropic(provider))
    assert len(provider.bodies) == 4


# -- graceful downgrade -----------------------------------------------------------------------------------------------


def openai_error(message: str, param: str | None, code: str) -> httpx.Response:
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return httpx.Response(400, json={"error": error})


def anthropic_error(message: str) -> httpx.Response:
    return httpx.Response(400, json={"type": "error", "error": {"type": "invalid_request_error", "message": message}})


OPENAI_REFUSALS = [
    pytest.param(
        "openai-compatible",
        openai_error(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
            "instead.",
            "max_tokens",
            "unsupported_parameter",
        ),
        lambda body: "max_tokens" not in body and body["max_completion_tokens"] == 64,
        id="max_tokens",
    ),
    pytest.param(
        "openai-chat",
        openai_error(
            "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is "
            "supported.",
            "temperature",
            "unsupported_value",
        ),
        lambda body: "temperature" not in body,
        id="temperature",
    ),
    pytest.param(
        "openai-chat",
        openai_error(
            "Unsupported parameter: 'stop' is not supported with this model.", "stop", "unsupported_parameter"
        ),
        lambda body: "stop" not in body,
        id="stop",
    ),
    pytest.param(
        "openai-compatible",
        openai_error(
            "Invalid schema for response_format 'plan': In context=('properties', 'goal'), 'minLength' is not "
            "permitted.",
            "response_format",
            "invalid_json_schema",
        ),
        lambda body: "minLength" not in json.dumps(body["response_format"]),
        id="schema_keyword",
    ),
    pytest.param(
        "openai-chat",
        openai_error(
            "Invalid schema for response_format 'plan': In context=(), 'required' is required to be supplied and to "
            "be an array including every key in properties.",
            "response_format",
            "invalid_json_schema",
        ),
        lambda body: "strict" not in body["response_format"]["json_schema"],
        id="strict_schema",
    ),
]


@pytest.mark.parametrize(("dialect", "refusal", "fixed"), OPENAI_REFUSALS)
def test_an_openai_refusal_naming_a_parameter_is_retried_without_it_and_remembered(
    dialect: str, refusal: httpx.Response, fixed: Any
) -> None:
    provider = Provider(refusal, ok_openai('{"goal": "g"}'), ok_openai('{"goal": "g"}'))
    log = ListLog()
    llm = openai(provider, dialect=dialect, logger=log, max_tokens=64)
    first, second = calls(llm, 2, schema=SCHEMA, schema_name="plan", stop=["\nRequest:"])
    assert len(provider.bodies) == 3  # the refused request, its retry, and the next call sent right the first time
    assert not fixed(provider.bodies[0]) and fixed(provider.bodies[1]) and fixed(provider.bodies[2])
    message = refusal.json()["error"]["message"]
    assert len(first.warnings) == 1 and message in first.warnings[0] and second.warnings == []
    [record] = [f for e, f in log.events if e == "llm_downgrade"]
    assert record["provider_message"] == message and record["dialect"] == dialect


ANTHROPIC_REFUSALS = [
    pytest.param(
        {"dialect": "anthropic-compatible"},
        anthropic_error("temperature: Extra inputs are not permitted"),
        lambda body: "temperature" not in body,
        id="temperature",
    ),
    pytest.param(
        {},
        anthropic_error("output_config.format: structured outputs are not supported for this model"),
        lambda body: "output_config" not in body and body["tool_choice"]["type"] == "tool",
        id="output_config_to_forced_tool",
    ),
    pytest.param(
        {"dialect": "anthropic-tool"},
        anthropic_error("Thinking may not be enabled when tool_choice forces tool use."),
        lambda body: "tool_choice" not in body and "tools" not in body,
        id="forced_tool_while_thinking",
    ),
    pytest.param(
        {"dialect": "anthropic-compatible"},
        anthropic_error("stop_sequences: Extra inputs are not permitted"),
        lambda body: "stop_sequences" not in body,
        id="stop_sequences",
    ),
]


@pytest.mark.parametrize(("options", "refusal", "fixed"), ANTHROPIC_REFUSALS)
def test_an_anthropic_refusal_naming_a_parameter_is_retried_without_it_and_remembered(
    options: dict[str, Any], refusal: httpx.Response, fixed: Any
) -> None:
    answer = ok_anthropic(text('{"goal": "g"}'))
    tool = ok_anthropic({"type": "tool_use", "id": "t", "name": "plan", "input": {"goal": "g"}}, stop_reason="tool_use")
    provider = Provider(refusal, tool if "output_config" in refusal.text else answer, answer)
    llm = anthropic(provider, **options)
    first, second = calls(llm, 2, schema=SCHEMA, schema_name="plan", stop=["\nRequest:"])
    assert not fixed(provider.bodies[0]) and fixed(provider.bodies[1]) and fixed(provider.bodies[2])
    assert json.loads(first.text) == {"goal": "g"}
    assert len(first.warnings) == 1 and second.warnings == []


def test_thinking_keeps_its_budget_on_top_of_the_answer_limit_and_never_forces_a_tool() -> None:
    provider = Provider(ok_anthropic(text('{"goal": "g"}')))
    calls(anthropic(provider, thinking_budget=2048, max_tokens=512), schema=SCHEMA)
    body = provider.bodies[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048} and body["max_tokens"] == 2560
    assert "tool_choice" not in body and body["output_config"]["format"]["type"] == "json_schema"


@pytest.mark.parametrize(
    "refusal",
    [
        openai_error("'messages' must contain at least one message.", "messages", "invalid_value"),
        httpx.Response(401, json={"error": {"message": "Incorrect API key provided", "param": None}}),
    ],
    ids=["unrelated_400", "401"],
)
def test_a_refusal_that_names_nothing_we_can_drop_is_not_retried(refusal: httpx.Response) -> None:
    provider = Provider(refusal)
    with pytest.raises(LLMRejected):
        calls(openai(provider))
    assert len(provider.bodies) == 1
