"""LLMPort over any OpenAI-compatible /chat/completions endpoint (OpenAI, llama.cpp, vLLM, Ollama, OpenRouter),
speaking the endpoint's dialect (adapters/llm/dialects.py)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping, Sequence
from random import random as uniform01
from typing import TYPE_CHECKING, Any

import httpx
import msgspec
from pydantic import SecretStr

from aeon.adapters.llm import defaults, downgrade, providers
from aeon.adapters.llm._http import JsonPoster
from aeon.adapters.llm._retry import Sleep
from aeon.adapters.llm.dialects import Choice, choose
from aeon.adapters.llm.wire_schemas import Profile, revert_text, to_wire
from aeon.application.errors import LLMBadResponse, LLMContentFiltered, LLMEmptyAnswer, LLMRefused, LLMTruncated
from aeon.application.ports import LLMPort, LoggerPort
from aeon.domain.llm import Completion, Message, ModelInfo, PromptProfile, Usage

if TYPE_CHECKING:  # the settings section is only read
    from aeon.adapters.llm.settings import LLMSettings


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
    tool_calls: list[Any] | None = None


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
    """LLMPort for the OpenAI chat-completions wire format; the endpoint (`base_url`, ending in /v1) is config.

    What each request carries (token parameter, sampling, stop sequences, structured-output mechanism and schema
    form) follows the dialect: `dialect` when given, else detected from the base URL and model name. Parameters the
    provider refuses are dropped for the rest of the run (adapters/llm/downgrade.py), with a warning on the answer.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: SecretStr | str | None = None,
        *,
        dialect: str | None = None,
        profile: PromptProfile | None = None,
        read_timeout: float = defaults.READ_TIMEOUT,
        max_attempts: int = defaults.MAX_ATTEMPTS,
        temperature: float = defaults.TEMPERATURE,
        max_tokens: int = defaults.MAX_TOKENS,
        logger: LoggerPort | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep = asyncio.sleep,
        random: Callable[[], float] = uniform01,
        now: Callable[[], float] = time.time,
        status: Callable[[str], None] | None = None,
    ) -> None:
        # A SecretStr from the settings is opened here, and its text kept only in the headers below.
        api_key = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        self._base_url = base_url
        self._model = model
        self._choice: Choice = choose("openai", dialect, base_url, model)
        self._profile_setting = profile
        self._adjust = downgrade.Adjustments()
        self._temperature = temperature
        self._max_tokens = max_tokens
        self._logger = logger
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
            status=status,
        )

    def __repr__(self) -> str:
        key = "<set>" if self._headers else None
        return (
            f"OpenAICompatLLM(base_url={self._base_url!r}, model={self._model!r}, "
            f"dialect={self._choice.dialect.name!r}, api_key={key})"
        )

    def describe(self) -> ModelInfo:
        return providers.describe(self._choice, "openai", self._model, self._base_url, self._profile_setting)

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
        dialect = self._choice.dialect

        def build() -> dict[str, Any]:
            return self._body(messages, schema, schema_name, limit, stop)

        async def post(body: dict[str, Any]) -> tuple[dict[str, Any], httpx.Headers]:
            return await self._poster.post_json("/chat/completions", body, self._headers)

        (data, headers), warnings = await downgrade.send(build, post, self._adjust, dialect, self._logger)
        completion = self._parse(data, headers, limit)
        if schema is not None and self._profile() == "strict":
            completion.text = revert_text(completion.text, schema)
        completion.warnings = warnings
        return completion

    def _profile(self) -> Profile:
        mechanism = self._adjust.mechanism(self._choice.dialect)
        if mechanism == "strict_json_schema":
            return "strict"
        return "grammar" if self._choice.dialect.schema_profile == "grammar" else "plain"

    def _body(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any] | None,
        schema_name: str,
        limit: int,
        stop: Sequence[str],
    ) -> dict[str, Any]:
        dialect, adjust = self._choice.dialect, self._adjust
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": message.role, "content": message.content} for message in messages],
        }
        if dialect.temperature and "temperature" not in adjust.dropped:
            body["temperature"] = self._temperature
        body[adjust.token_param or dialect.token_param] = limit
        if stop and dialect.max_stop and "stop" not in adjust.dropped:
            body["stop"] = list(stop)[: dialect.max_stop]
        mechanism = adjust.mechanism(dialect)
        if schema is None or mechanism == "none":
            return body
        if mechanism == "json_object":
            body["response_format"] = {"type": "json_object"}
            return body
        # The nested form: llama.cpp silently ignores a flat `response_format: {type, schema}`.
        spec: dict[str, Any] = {
            "name": _schema_name(schema_name),
            "schema": to_wire(schema, self._profile(), adjust.removed_keywords),
        }
        if mechanism == "strict_json_schema":
            spec["strict"] = True
        body["response_format"] = {"type": "json_schema", "json_schema": spec}
        if dialect.compact_json:  # no newline inside a JSON answer is needed: every one is a generated token
            body["logit_bias"] = {"\n": -100, "\n\n": -100}  # llama.cpp tokenizes a key that is no id
        return body

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
        reason = choice.finish_reason
        if reason == "length":
            raise LLMTruncated(f"answer truncated at the token limit (max_tokens={limit})", usage=self._usage(reply))
        if reason == "content_filter":
            raise LLMContentFiltered("answer stopped by the provider's content filter")
        if message.refusal:
            raise LLMRefused(f"model refused: {message.refusal[:200]}")
        if reason in ("tool_calls", "function_call") or message.tool_calls:
            raise LLMBadResponse(f"the model answered with a tool call (finish_reason={reason}); none was offered")
        if message.content is None or not message.content.strip():
            raise LLMEmptyAnswer(f"the model's answer is empty (finish_reason={reason})")
        return Completion(
            text=message.content,
            usage=self._usage(reply),
            request_id=headers.get("x-request-id") or reply.id,
            finish_reason=reason,
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


def _schema_name(name: str) -> str:
    """OpenAI's rule for `json_schema.name`: 1-64 letters, digits, '_' or '-'."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64]
    return cleaned or "answer"


def from_settings(llm: LLMSettings, *, logger: LoggerPort, status: Callable[[str], None] | None) -> LLMPort:
    """The adapter of provider record `openai`, from the `llm:` section (no I/O); as the port: mypy checks it."""
    assert llm.base_url is not None and llm.model is not None, "filled by the settings schema"
    return OpenAICompatLLM(
        base_url=llm.base_url,
        model=llm.model,
        api_key=llm.api_key,  # still a SecretStr: the adapter opens it
        dialect=llm.dialect,
        profile=llm.profile,
        read_timeout=llm.read_timeout,
        max_attempts=llm.max_attempts,
        max_tokens=llm.max_tokens,
        temperature=llm.temperature,
        logger=logger,
        status=status,
    )
