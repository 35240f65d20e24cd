"""The local adapter's transport logs llama-server's own timings per answered call and passes the answer through."""

from __future__ import annotations

import asyncio
import json

import httpx

from aeon.adapters.llm._timings import TimingsTransport
from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.domain.llm import Message
from aeon.domain.log_llm import LocalCallTimingsRecord

ANSWER = {
    "choices": [{"message": {"content": '{"n": 1}'}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1300, "completion_tokens": 7},
    "timings": {"cache_n": 1250, "prompt_n": 50, "prompt_ms": 210.04, "predicted_n": 7, "predicted_ms": 95.55},
}


def _call(reply: dict[str, object], path: str = "/v1/chat/completions") -> tuple[str, list[LocalCallTimingsRecord]]:
    seen: list[LocalCallTimingsRecord] = []
    inner = httpx.MockTransport(lambda request: httpx.Response(200, json=reply))

    async def go() -> str:
        async with httpx.AsyncClient(transport=TimingsTransport(inner, seen.append)) as client:
            return (await client.post(f"http://127.0.0.1{path}", json={})).text

    return asyncio.run(go()), seen


def test_an_answer_with_timings_is_logged_with_the_servers_tokens_and_milliseconds() -> None:
    body, seen = _call(ANSWER)
    assert json.loads(body) == ANSWER
    assert seen == [
        LocalCallTimingsRecord(
            prompt_tokens=50, prompt_ms=210.0, cached_tokens=1250, generated_tokens=7, generation_ms=95.5
        )
    ]


def test_an_answer_without_timings_or_another_path_logs_nothing() -> None:
    assert _call({"choices": []})[1] == []
    assert _call(ANSWER, path="/slots/0")[1] == []


def test_the_chat_adapter_reads_the_same_answer_through_the_transport() -> None:
    seen: list[LocalCallTimingsRecord] = []
    inner = httpx.MockTransport(lambda request: httpx.Response(200, json=ANSWER))
    timed = TimingsTransport(inner, seen.append)
    llm = OpenAICompatLLM("http://127.0.0.1/v1", "m", dialect="llamacpp", transport=timed)

    async def go() -> str:
        try:
            return (await llm.complete([Message(role="user", content="hi")])).text
        finally:
            await llm.aclose()

    assert asyncio.run(go()) == '{"n": 1}'
    assert [r.generated_tokens for r in seen] == [7]
