"""LLMPort over the Anthropic Messages API (/v1/messages), also served by llama.cpp's llama-server."""

from __future__ import annotations

import asyncio
import json
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


class _Block(msgspec.Struct):
    type: str
    text: str | None = None
    name: str | None = None
    input: Any = None


class _Usage(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


class _MessagesResponse(msgspec.Struct):
    id: str | None = None
    model: str | None = None
    content: list[_Block] = msgspec.field(default_factory=list)
    stop_reason: str | None = None
    usage: _Usage | None = None


def to_anthropic_turns(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, str]]]:
    """Lift system messages into the top-level `system` text and merge same-role neighbours (the API wants
    user/assistant alternation)."""
    system: list[str] = []
    turns: list[dict[str, str]] = []
    for message in messages:
        if message.role == "system":
            system.append(message.content)
        elif turns and turns[-1]["role"] == message.role:
            turns[-1]["content"] += "\n\n" + message.content
        else:
            turns.append({"role": message.role, "content": message.content})
    return ("\n\n".join(system) or None), turns


class AnthropicLLM:
    """LLMPort for the Anthropic Messages wire format; a schema becomes one forced tool whose input is the answer."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        anthropic_version: str = "2023-06-01",
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
        self._headers = {"anthropic-version": anthropic_version}
        if api_key:
            self._headers["x-api-key"] = api_key
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
        key = "<set>" if "x-api-key" in self._headers else None
        return f"AnthropicLLM(base_url={self._base_url!r}, model={self._model!r}, api_key={key})"

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
        system, turns = to_anthropic_turns(messages)
        body: dict[str, Any] = {
            "model": self._model,
            "max_tokens": limit,
            "temperature": self._temperature,
            "messages": turns,
        }
        if system is not None:
            body["system"] = system
        if stop:
            body["stop_sequences"] = list(stop)
        if schema is not None:
            body["tools"] = [
                {
                    "name": schema_name,
                    "description": f"Record the answer as `{schema_name}`, matching the input schema exactly.",
                    "input_schema": dict(schema),
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": schema_name}
        data, headers = await self._poster.post_json("/v1/messages", body, self._headers)
        return self._parse(data, headers, limit, tool_forced=schema is not None)

    async def aclose(self) -> None:
        await self._poster.aclose()

    def _parse(self, data: dict[str, Any], headers: httpx.Headers, limit: int, *, tool_forced: bool) -> Completion:
        try:
            reply = msgspec.convert(data, _MessagesResponse)
        except msgspec.ValidationError as exc:
            raise LLMBadResponse(f"unexpected messages response shape: {exc}") from exc
        if reply.stop_reason == "max_tokens":
            raise LLMTruncated(
                f"answer truncated at the token limit (max_tokens={limit})", usage=self._usage(reply.usage or _Usage())
            )
        if reply.stop_reason == "refusal":
            raise LLMRefused("model refused to answer (stop_reason=refusal)")
        if not reply.content:
            raise LLMBadResponse("no content blocks")
        return Completion(
            text=self._answer_text(reply.content, tool_forced=tool_forced),
            usage=self._usage(reply.usage or _Usage()),
            request_id=headers.get("request-id") or reply.id,
            finish_reason=reply.stop_reason,
            model=reply.model or self._model,
        )

    @staticmethod
    def _answer_text(blocks: list[_Block], *, tool_forced: bool) -> str:
        tool_use = next((block for block in blocks if block.type == "tool_use"), None)
        if tool_forced and tool_use is not None:
            if tool_use.input is None:
                raise LLMBadResponse("tool_use block without input")
            return json.dumps(tool_use.input, ensure_ascii=False)
        # llama.cpp accepts a forced tool_choice without enforcing it and answers in a text block: that text is the
        # answer, for the caller to parse like any other.
        texts = [block.text for block in blocks if block.type == "text" and block.text is not None]
        if not texts:
            raise LLMBadResponse(f"no text or tool_use block (got {', '.join(block.type for block in blocks)})")
        return "".join(texts)

    @staticmethod
    def _usage(usage: _Usage) -> Usage:
        cached = usage.cache_read_input_tokens or 0
        # Anthropic's input_tokens excludes cache reads and writes; add them back so that, as with OpenAI,
        # prompt_tokens is the whole prompt and cached_tokens a part of it.
        prompt = (usage.input_tokens or 0) + cached + (usage.cache_creation_input_tokens or 0)
        return Usage(prompt_tokens=prompt, completion_tokens=usage.output_tokens or 0, cached_tokens=cached)
