"""AnthropicLLM speaks the Messages wire format, forced-tool schemas included, and lets only port errors escape."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from aeon.adapters.llm.anthropic import AnthropicLLM, to_anthropic_turns
from aeon.application.errors import (
    LLMBadResponse,
    LLMEmptyAnswer,
    LLMError,
    LLMRefused,
    LLMRejected,
    LLMTruncated,
    LLMUnavailable,
)
from aeon.application.ports import LLMPort
from aeon.domain.llm import Completion, Message

from harness import ListLog

KEY = "sk-test-PLANTED-SECRET-123"
SCHEMA = {"type": "object", "properties": {"steps": {"type": "array"}}, "required": ["steps"]}
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


class SleepRecorder:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def reply(
    *blocks: dict[str, Any],
    stop_reason: str = "end_turn",
    usage: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    body = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-served",
        "content": list(blocks),
        "stop_reason": stop_reason,
        "usage": usage or {"input_tokens": 12, "output_tokens": 5},
    }
    return httpx.Response(200, json=body, headers=headers)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


class Server:
    def __init__(self, *responses: httpx.Response) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.responses.pop(0)

    def body(self, index: int = 0) -> Any:
        return json.loads(self.requests[index].content)


def make(server: Server, **kwargs: Any) -> tuple[AnthropicLLM, SleepRecorder]:
    sleep = SleepRecorder()
    options: dict[str, Any] = {"transport": httpx.MockTransport(server), "sleep": sleep, "random": lambda: 0.0}
    options.update(kwargs)
    return AnthropicLLM("https://anthropic.test", "claude-test", **options), sleep


def complete(llm: AnthropicLLM, messages: list[Message] | None = None, **kwargs: Any) -> Completion:
    async def run() -> Completion:
        try:
            return await llm.complete(messages or [Message(role="user", content="Plan it")], **kwargs)
        finally:
            await llm.aclose()

    return asyncio.run(run())


def test_it_satisfies_the_llm_port() -> None:
    llm, _ = make(Server())
    assert isinstance(llm, LLMPort)


def test_posts_to_v1_messages_with_version_header_and_no_key_when_none_given() -> None:
    server = Server(reply(text("hi")))
    llm, _ = make(server, max_tokens=99, temperature=0.3)
    complete(llm)
    request = server.requests[0]
    assert str(request.url) == "https://anthropic.test/v1/messages"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "x-api-key" not in request.headers
    # a Claude model: current models reject sampling parameters, so no temperature goes out
    assert server.body() == {
        "model": "claude-test",
        "max_tokens": 99,
        "messages": [{"role": "user", "content": "Plan it"}],
    }


def test_an_anthropic_compatible_server_gets_the_temperature() -> None:
    server = Server(reply(text("hi")))
    llm, _ = make(server, max_tokens=99, temperature=0.3, dialect="anthropic-compatible")
    complete(llm)
    assert server.body()["temperature"] == 0.3


def test_system_messages_go_top_level_and_same_role_neighbours_merge() -> None:
    messages = [
        Message(role="system", content="Rule one."),
        Message(role="user", content="a"),
        Message(role="system", content="Rule two."),
        Message(role="user", content="b"),
        Message(role="assistant", content="c"),
        Message(role="assistant", content="d"),
        Message(role="user", content="e"),
    ]
    system, turns = to_anthropic_turns(messages)
    assert system == "Rule one.\n\nRule two."
    assert turns == [
        {"role": "user", "content": "a\n\nb"},
        {"role": "assistant", "content": "c\n\nd"},
        {"role": "user", "content": "e"},
    ]
    server = Server(reply(text("ok")))
    llm, _ = make(server)
    complete(llm, messages)
    # one system block marked for Anthropic's prompt cache: the run's shared prompt prefix is its system text
    cached = {"type": "text", "text": "Rule one.\n\nRule two.", "cache_control": {"type": "ephemeral"}}
    assert server.body()["system"] == [cached]
    assert server.body()["messages"] == turns


def test_a_schema_becomes_one_forced_tool_in_the_tool_dialect() -> None:
    server = Server(reply({"type": "tool_use", "id": "tu_1", "name": "plan", "input": {"steps": []}}))
    llm, _ = make(server, dialect="anthropic-tool")
    complete(llm, schema=SCHEMA, schema_name="plan")
    body = server.body()
    assert len(body["tools"]) == 1
    assert body["tools"][0]["name"] == "plan"
    assert body["tools"][0]["input_schema"] == SCHEMA
    assert body["tools"][0]["description"]
    assert body["tool_choice"] == {"type": "tool", "name": "plan"}


def test_a_tool_use_answer_is_returned_as_json_text() -> None:
    blocks = (text("Here you go."), {"type": "tool_use", "id": "tu_1", "name": "plan", "input": {"steps": ["é", 2]}})
    llm, _ = make(Server(reply(*blocks, stop_reason="tool_use")), dialect="anthropic-tool")
    result = complete(llm, schema=SCHEMA, schema_name="plan")
    assert json.loads(result.text) == {"steps": ["é", 2]}
    assert result.finish_reason == "tool_use"


def test_a_forced_tool_answered_with_text_is_a_normal_answer() -> None:
    llm, _ = make(Server(reply(text('{"steps": '), text("[]}"))), dialect="anthropic-tool")
    result = complete(llm, schema=SCHEMA, schema_name="plan")
    assert result.text == '{"steps": []}'
    assert result.finish_reason == "end_turn"


def test_returns_usage_request_id_and_model() -> None:
    usage = {"input_tokens": 10, "output_tokens": 7, "cache_read_input_tokens": 30, "cache_creation_input_tokens": 2}
    llm, _ = make(Server(reply(text("hi"), usage=usage, headers={"request-id": "req_777"})))
    result = complete(llm)
    assert result.usage.completion_tokens == 7
    assert result.usage.cached_tokens == 30
    assert result.usage.prompt_tokens == 42  # input_tokens excludes cache reads/writes; the total includes them
    assert result.request_id == "req_777"
    assert result.model == "claude-served"


def test_request_id_falls_back_to_the_body_id() -> None:
    llm, _ = make(Server(reply(text("hi"))))
    result = complete(llm)
    assert result.request_id == "msg_01"
    assert (result.usage.prompt_tokens, result.usage.cached_tokens) == (12, 0)


def test_stop_reason_max_tokens_is_truncated() -> None:
    llm, _ = make(Server(reply(text('{"steps": ['), stop_reason="max_tokens")))
    with pytest.raises(LLMTruncated):
        complete(llm)


def test_stop_reason_refusal_is_refused() -> None:
    llm, _ = make(Server(reply(stop_reason="refusal")))
    with pytest.raises(LLMRefused):
        complete(llm)


def test_no_content_blocks_is_an_empty_answer() -> None:
    llm, _ = make(Server(reply()))
    with pytest.raises(LLMEmptyAnswer, match="empty"):
        complete(llm)


def test_only_thinking_blocks_is_an_empty_answer() -> None:
    llm, _ = make(Server(reply({"type": "thinking", "thinking": "hmm", "signature": "sig"})))
    with pytest.raises(LLMEmptyAnswer, match="empty"):
        complete(llm)


def test_an_html_200_is_a_bad_response() -> None:
    llm, _ = make(Server(httpx.Response(200, text="<html>gateway</html>")))
    with pytest.raises(LLMBadResponse):
        complete(llm)


def test_overloaded_529_is_retried_until_success() -> None:
    server = Server(httpx.Response(529, json=OVERLOADED), httpx.Response(529, json=OVERLOADED), reply(text("ok")))
    logger = ListLog()
    llm, sleep = make(server, logger=logger)
    assert complete(llm).text == "ok"
    assert len(server.requests) == 3
    assert sleep.waits == [0.5, 1.0]
    assert [(event, fields["status"]) for event, fields in logger.events] == [("llm_retry", 529), ("llm_retry", 529)]


def test_overload_outlasting_the_attempts_is_unavailable() -> None:
    server = Server(*(httpx.Response(529, json=OVERLOADED) for _ in range(3)))
    llm, _ = make(server)
    with pytest.raises(LLMUnavailable, match=r"after 3 attempts \(HTTP 529; waited") as caught:
        complete(llm)
    assert caught.value.attempts == 3


def test_invalid_request_is_rejected_with_the_provider_message() -> None:
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: too large"}}
    server = Server(httpx.Response(400, json=error))
    llm, _ = make(server)
    with pytest.raises(LLMRejected, match=r"^rejected: HTTP 400 max_tokens: too large$"):
        complete(llm)
    assert len(server.requests) == 1


def test_the_api_key_is_sent_as_x_api_key_and_leaks_nowhere_else() -> None:
    echo = {"type": "error", "error": {"type": "authentication_error", "message": f"invalid x-api-key {KEY}"}}
    server = Server(
        httpx.Response(529, json=OVERLOADED),
        httpx.Response(401, json=echo),
        httpx.Response(503, text=KEY),
        httpx.Response(503, text=KEY),
        httpx.Response(503, text=KEY),
    )
    logger = ListLog()
    llm, _ = make(server, api_key=KEY, logger=logger)
    errors: list[LLMError] = []

    async def run() -> None:
        for _ in range(2):
            try:
                await llm.complete([Message(role="user", content="hi")])
            except LLMError as exc:
                errors.append(exc)
        await llm.aclose()

    asyncio.run(run())
    assert [type(error) for error in errors] == [LLMRejected, LLMUnavailable]
    assert all(request.headers["x-api-key"] == KEY for request in server.requests)
    assert KEY not in repr(llm)
    assert "api_key=<set>" in repr(llm)
    for error in errors:
        assert KEY not in str(error)
        assert KEY not in repr(error)
    assert logger.events
    assert KEY not in repr(logger.events)
