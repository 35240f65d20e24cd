"""LLMPort over any OpenAI-compatible /chat/completions endpoint (OpenAI, llama.cpp, vLLM, Ollama, OpenRouter)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from random import random as uniform01
from typing import Any

import httpx
import msgspec

from aeon.adapters.llm._http import JsonPoster, Sleep
from aeon.application.errors import LLMBadResponse, LLMRefused, LLMTruncated
from aeon.application.ports import LoggerPort
from aeon.domain.llm import Completion, Message, Usage


class _PromptDetails(msgspec.Struct):
    cached_tokens: int | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: _PromptDetails | None = None


class _Timings(msgspec.Struct):  # llama.cpp's per-request timings; cache_n = prompt tokens reused from the KV cache
    cache_n: int | None = None


class _Message(msgspec.Struct):
    content: str | None = None
    refusal: str | None = None


class _Choice(msgspec.Struct):
    message: _Message | None = None
    finish_reason: str | None = None


class _ChatResponse(msgspec.Struct):
    id: str | None = None
    model: str | None = None
    choices: list[_Choice] = msgspec.field(default_factory=list)
    usage: _Usage | None = None
    timings: _Timings | None = None
    tokens_cached: int | None = None  # older llama.cpp servers report the cache hit here


class OpenAICompatLLM:
    """LLMPort for the OpenAI chat-completions wire format; the endpoint (`base_url`, ending in /v1) is config."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        read_timeout: float = 60.0,
        max_attempts: int = 3,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        logger: LoggerPort | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep = asyncio.sleep,
        random: Callable[[], float] = uniform01,
        now: Callable[[], float] = time.time,
    ) -> None:
        self._base_url = base_url
        self._model = model
        self._temperature = temperature
        self._max_tokens = max_tokens
        # The key lives only in this header map; __repr__ and every error message leave it out.
        self._headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._poster = JsonPoster(
            base_url,
            read_timeout=read_timeout,
            max_attempts=max_attempts,
            logger=logger,
            transport=transport,
            sleep=sleep,
            random=random,
            now=now,
            secrets=(api_key,) if api_key else (),
        )

    def __repr__(self) -> str:
        key = "<set>" if self._headers else None
        return f"OpenAICompatLLM(base_url={self._base_url!r}, model={self._model!r}, api_key={key})"

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
        max_tokens: int | None = None,
        stop: Sequence[str] = (),
    ) -> Completion:
        limit = self._max_tokens if max_tokens is None else max_tokens
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": message.role, "content": message.content} for message in messages],
            "temperature": self._temperature,
            "max_tokens": limit,
        }
        if stop:
            body["stop"] = list(stop)[:4]  # OpenAI accepts at most 4
        if schema is not None:
            # The nested form: llama.cpp silently ignores a flat `response_format: {type, schema}`.
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": dict(schema), "strict": True},
            }
        data, headers = await self._poster.post_json("/chat/completions", body, self._headers)
        return self._parse(data, headers, limit)

    async def aclose(self) -> None:
        await self._poster.aclose()

    def _parse(self, data: dict[str, Any], headers: httpx.Headers, limit: int) -> Completion:
        try:
            reply = msgspec.convert(data, _ChatResponse)
        except msgspec.ValidationError as exc:
            raise LLMBadResponse(f"unexpected chat completion shape: {exc}") from exc
        if not reply.choices:
            raise LLMBadResponse("empty choices")
        choice = reply.choices[0]
        message = choice.message or _Message()
        if choice.finish_reason == "length":
            raise LLMTruncated(f"answer truncated at the token limit (max_tokens={limit})", usage=self._usage(reply))
        if choice.finish_reason == "content_filter":
            raise LLMRefused("answer stopped by the provider's content filter")
        if message.refusal:
            raise LLMRefused(f"model refused: {message.refusal[:200]}")
        if message.content is None:
            raise LLMBadResponse(f"no message content (finish_reason={choice.finish_reason})")
        return Completion(
            text=message.content,
            usage=self._usage(reply),
            request_id=headers.get("x-request-id") or reply.id,
            finish_reason=choice.finish_reason,
            model=reply.model or self._model,
        )

    @staticmethod
    def _usage(reply: _ChatResponse) -> Usage:
        usage = reply.usage or _Usage()
        cached_sources = (
            usage.prompt_tokens_details.cached_tokens if usage.prompt_tokens_details else None,
            reply.timings.cache_n if reply.timings else None,
            reply.tokens_cached,
        )
        cached = next((count for count in cached_sources if count is not None), 0)
        return Usage(
            prompt_tokens=usage.prompt_tokens or 0, completion_tokens=usage.completion_tokens or 0, cached_tokens=cached
        )
