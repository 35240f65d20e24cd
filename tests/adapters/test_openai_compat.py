"""OpenAICompatLLM speaks the chat-completions wire format and lets only port errors escape."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from aeon.adapters.llm.openai_compat import OpenAICompatLLM
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
MESSAGES = [Message(role="system", content="Be terse."), Message(role="user", content="Hi")]


class SleepRecorder:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def chat(
    content: str | None = "hello",
    *,
    finish_reason: str = "stop",
    usage: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> httpx.Response:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "model": "served-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": usage or {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
        **extra,
    }
    return httpx.Response(200, json=body, headers=headers)


class Server:
    """Records requests and answers them in order."""

    def __init__(self, *responses: httpx.Response | Callable[[httpx.Request], httpx.Response]) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        response = self.responses.pop(0)
        return response if isinstance(response, httpx.Response) else response(request)

    def body(self, index: int = 0) -> Any:
        return json.loads(self.requests[index].content)


def make(server: Server, **kwargs: Any) -> tuple[OpenAICompatLLM, SleepRecorder]:
    sleep = SleepRecorder()
    options: dict[str, Any] = {"transport": httpx.MockTransport(server), "sleep": sleep, "random": lambda: 0.0}
    options.update(kwargs)
    base_url = options.pop("base_url", "http://llm.test/v1")
    return OpenAICompatLLM(base_url, "test-model", **options), sleep


def complete(llm: OpenAICompatLLM, **kwargs: Any) -> Completion:
    async def run() -> Completion:
        try:
            return await llm.complete(MESSAGES, **kwargs)
        finally:
            await llm.aclose()

    return asyncio.run(run())


def test_it_satisfies_the_llm_port() -> None:
    llm, _ = make(Server())
    assert isinstance(llm, LLMPort)


@pytest.mark.parametrize("base_url", ["http://llm.test/v1", "http://llm.test/v1/"])
def test_posts_the_chat_request_to_base_url_chat_completions(base_url: str) -> None:
    server = Server(chat())
    llm, _ = make(server, base_url=base_url, temperature=0.2, max_tokens=77)
    complete(llm)
    request = server.requests[0]
    assert str(request.url) == "http://llm.test/v1/chat/completions"
    assert request.method == "POST"
    assert "authorization" not in request.headers
    assert server.body() == {
        "model": "test-model",
        "messages": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"}],
        "temperature": 0.2,
        "max_tokens": 77,
    }


def test_per_call_max_tokens_overrides_the_default() -> None:
    server = Server(chat())
    llm, _ = make(server)
    complete(llm, max_tokens=5)
    assert server.body()["max_tokens"] == 5


def test_a_schema_is_sent_in_the_nested_json_schema_form() -> None:
    server = Server(chat('{"x": 1}'))
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    llm, _ = make(server)  # an unknown server: the generic OpenAI-compatible dialect, not strict
    result = complete(llm, schema=schema, schema_name="plan")
    assert server.body()["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "plan", "schema": schema},
    }
    assert result.text == '{"x": 1}'


def test_a_llama_server_asked_for_json_gets_no_newlines_so_the_answer_is_one_line() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    for asked, banned in ((schema, {"\n": -100, "\n\n": -100}), (None, None)):
        server = Server(chat('{"x": 1}'))
        llm, _ = make(server, dialect="llamacpp")
        complete(llm, schema=asked)
        assert server.body().get("logit_bias") == banned  # free text keeps its newlines
    server = Server(chat('{"x": 1}'))
    complete(make(server)[0], schema=schema)  # another server: its sampling is left alone
    assert "logit_bias" not in server.body()


def test_openai_chat_models_get_a_strict_schema_and_the_answer_back_in_the_original_shape() -> None:
    server = Server(chat('{"x": 1, "note": null, "args": "{\\"a\\": 2}"}'))
    schema = {
        "type": "object",
        "properties": {
            "x": {"type": "integer"},
            "note": {"type": "string", "maxLength": 9},
            "args": {"type": "object"},
        },
        "required": ["x", "args"],
    }
    llm, _ = make(server, base_url="https://api.openai.com/v1")
    result = complete(llm, schema=schema, schema_name="plan")
    sent = server.body()["response_format"]["json_schema"]
    assert sent["strict"] is True
    assert sent["schema"] == {
        "type": "object",
        "properties": {
            "x": {"type": "integer"},
            "note": {"type": ["string", "null"]},
            "args": {"type": "string", "description": "A JSON object encoded as a string."},
        },
        "required": ["x", "note", "args"],
        "additionalProperties": False,
    }
    assert json.loads(result.text) == {"x": 1, "args": {"a": 2}}


def test_returns_text_usage_request_id_finish_reason_and_model() -> None:
    usage = {"prompt_tokens": 20, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 16}}
    llm, _ = make(Server(chat("hello", usage=usage, headers={"x-request-id": "req-abc"})))
    result = complete(llm)
    assert result.text == "hello"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.cached_tokens) == (20, 4, 16)
    assert result.request_id == "req-abc"
    assert result.finish_reason == "stop"
    assert result.model == "served-model"


def test_request_id_falls_back_to_the_body_id() -> None:
    llm, _ = make(Server(chat()))
    assert complete(llm).request_id == "chatcmpl-1"


def test_llama_cpp_cache_hits_are_read_from_timings() -> None:
    llm, _ = make(Server(chat(timings={"cache_n": 9, "prompt_n": 2})))
    assert complete(llm).usage.cached_tokens == 9


def test_llama_cpp_cache_hits_are_read_from_tokens_cached() -> None:
    llm, _ = make(Server(chat(tokens_cached=5)))
    assert complete(llm).usage.cached_tokens == 5


def test_missing_usage_reports_zero_tokens() -> None:
    response = httpx.Response(200, json={"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]})
    llm, _ = make(Server(response))
    result = complete(llm)
    assert (result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.cached_tokens) == (0, 0, 0)
    assert result.model == "test-model"


def test_empty_choices_is_a_bad_response() -> None:
    llm, _ = make(Server(httpx.Response(200, json={"id": "x", "choices": []})))
    with pytest.raises(LLMBadResponse, match="empty choices"):
        complete(llm)


def test_null_content_is_an_empty_answer() -> None:
    llm, _ = make(Server(chat(None)))
    with pytest.raises(LLMEmptyAnswer, match="empty"):
        complete(llm)


def test_a_malformed_choice_is_a_bad_response() -> None:
    llm, _ = make(Server(httpx.Response(200, json={"choices": [{"message": {"content": 42}}]})))
    with pytest.raises(LLMBadResponse, match="unexpected chat completion shape"):
        complete(llm)


def test_finish_reason_length_is_truncated_and_the_text_is_never_returned() -> None:
    llm, _ = make(Server(chat('{"partial": tr', finish_reason="length")))
    with pytest.raises(LLMTruncated) as caught:
        complete(llm)
    assert "partial" not in str(caught.value)


def test_finish_reason_content_filter_is_refused() -> None:
    llm, _ = make(Server(chat(None, finish_reason="content_filter")))
    with pytest.raises(LLMRefused):
        complete(llm)


def test_a_refusal_message_is_refused() -> None:
    body = {"choices": [{"message": {"content": None, "refusal": "I can't help with that."}, "finish_reason": "stop"}]}
    llm, _ = make(Server(httpx.Response(200, json=body)))
    with pytest.raises(LLMRefused, match="can't help"):
        complete(llm)


def test_a_truncated_json_body_is_a_bad_response() -> None:
    llm, _ = make(Server(httpx.Response(200, content=b'{"choices": [{"mess')))
    with pytest.raises(LLMBadResponse):
        complete(llm)


def test_transient_failures_are_retried_then_succeed() -> None:
    server = Server(httpx.Response(503), httpx.Response(429, headers={"retry-after": "2"}), chat())
    logger = ListLog()
    llm, sleep = make(server, logger=logger)
    assert complete(llm).text == "hello"
    assert len(server.requests) == 3
    assert sleep.waits == [0.5, 2.0]
    assert [fields["wait_seconds"] for _, fields in logger.events] == [0.5, 2.0]


def test_exhaustion_is_unavailable_after_max_attempts() -> None:
    server = Server(*(httpx.Response(502) for _ in range(2)))
    llm, sleep = make(server, max_attempts=2)
    with pytest.raises(LLMUnavailable, match=r"after 2 attempts \(HTTP 502; waited 0.5 s\)"):
        complete(llm)
    assert sleep.waits == [0.5]


def test_aclose_closes_the_transport() -> None:
    class ClosingTransport(httpx.MockTransport):
        closed = False

        async def aclose(self) -> None:
            self.closed = True

    transport = ClosingTransport(Server())
    llm = OpenAICompatLLM("http://llm.test/v1", "m", transport=transport)
    asyncio.run(llm.aclose())
    assert transport.closed


def test_the_api_key_is_sent_as_bearer_and_leaks_nowhere_else() -> None:
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}}
    server = Server(
        httpx.Response(503, text=f"upstream rejected key {KEY}"),
        lambda request: httpx.Response(401, json=echo),
        httpx.Response(503),
        httpx.Response(503),
        httpx.Response(503),
    )
    logger = ListLog()
    llm, _ = make(server, api_key=KEY, logger=logger)
    errors: list[LLMError] = []

    async def run() -> None:
        for _ in range(2):
            try:
                await llm.complete(MESSAGES)
            except LLMError as exc:
                errors.append(exc)
        await llm.aclose()

    asyncio.run(run())
    assert [type(error) for error in errors] == [LLMRejected, LLMUnavailable]
    assert all(request.headers["authorization"] == f"Bearer {KEY}" for request in server.requests)
    assert KEY not in repr(llm)
    assert "api_key=<set>" in repr(llm)
    for error in errors:
        assert KEY not in str(error)
        assert KEY not in repr(error)
    assert logger.events
    assert KEY not in repr(logger.events)


def test_half_a_surrogate_pair_in_an_answer_becomes_a_replacement_character_and_a_whole_pair_an_emoji() -> None:
    body = b'{"id": "c", "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": '
    body += b'"half \\ud83d, whole \\ud83d\\ude00"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, '
    body += b'"completion_tokens": 1, "total_tokens": 2}}'
    llm, _ = make(Server(httpx.Response(200, content=body, headers={"content-type": "application/json"})))
    completion = complete(llm)
    assert completion.text == "half \ufffd, whole \U0001f600"
    completion.text.encode("utf-8")  # what the log, the result and the terminal need
