"""LLMPort over the Anthropic Messages API (/v1/messages), also served by llama.cpp's llama-server, speaking the
endpoint's dialect (adapters/llm/dialects.py)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from random import random as uniform01
from typing import Any

import httpx
import msgspec
from pydantic import SecretStr

from aeon.adapters.llm import defaults, downgrade, providers
from aeon.adapters.llm._http import JsonPoster
from aeon.adapters.llm._retry import Sleep
from aeon.adapters.llm.dialects import Choice, choose
from aeon.adapters.llm.settings import LLMSettings
from aeon.adapters.llm.wire_schemas import revert_text, to_wire
from aeon.application.errors import LLMBadResponse, LLMContextExceeded, LLMEmptyAnswer, LLMRefused, LLMTruncated
from aeon.application.ports import LLMPort, LoggerPort
from aeon.domain.llm import Completion, Message, ModelInfo, PromptProfile, Usage


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


def to_anthropic_turns(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """Lift system messages into the top-level `system` text and merge same-role neighbours (the API wants
    user/assistant alternation)."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            system.append(message.content)
        elif turns and turns[-1]["role"] == message.role:
            turns[-1]["content"] += "\n\n" + message.content
        else:
            turns.append({"role": message.role, "content": message.content})
    return ("\n\n".join(system) or None), turns


MAX_CONTINUATIONS = 3  # `pause_turn` answers resumed per call before giving up


class AnthropicLLM:
    """LLMPort for the Anthropic Messages wire format.

    A schema reaches the model the way the dialect says: native structured outputs (`output_config.format`), one
    forced tool whose input is the answer, or not at all (few-shot prompt plus deterministic repair, for servers
    such as llama.cpp that ignore both). `thinking_budget` turns extended thinking on (never with a forced tool).
    A `pause_turn` answer is continued; every other stop reason is an answer or a distinct error.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: SecretStr | str | None = None,
        *,
        dialect: str | None = None,
        profile: PromptProfile | None = None,
        anthropic_version: str = defaults.ANTHROPIC_VERSION,
        thinking_budget: int | None = None,
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
        self._choice: Choice = choose("anthropic", dialect, base_url, model, thinking=thinking_budget is not None)
        self._profile_setting = profile
        self._adjust = downgrade.Adjustments()
        self._thinking_budget = thinking_budget
        self._temperature = temperature
        self._max_tokens = max_tokens
        self._logger = logger
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
            status=status,
        )

    def __repr__(self) -> str:
        key = "<set>" if "x-api-key" in self._headers else None
        return (
            f"AnthropicLLM(base_url={self._base_url!r}, model={self._model!r}, "
            f"dialect={self._choice.dialect.name!r}, api_key={key})"
        )

    def describe(self) -> ModelInfo:
        return providers.describe(self._choice, "anthropic", self._model, self._base_url, self._profile_setting)

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
        dialect = self._choice.dialect
        texts: list[str] = []
        warnings: list[str] = []
        usage = Usage()
        for _ in range(MAX_CONTINUATIONS + 1):

            def build(turns: list[dict[str, Any]] = turns) -> dict[str, Any]:
                return self._body(system, turns, schema, schema_name, limit, stop)

            async def post(body: dict[str, Any]) -> tuple[dict[str, Any], httpx.Headers]:
                return await self._poster.post_json("/v1/messages", body, self._headers)

            (data, headers), changed = await downgrade.send(build, post, self._adjust, dialect, self._logger)
            warnings += changed
            forced = self._adjust.mechanism(dialect) == "forced_tool" and schema is not None
            reply = self._decode(data)
            usage = _add(usage, self._usage(reply.usage or _Usage()))
            if reply.stop_reason != "pause_turn":
                break
            # The model paused a long turn: send its partial answer back so it can continue where it stopped.
            texts.append(self._text(reply.content, tool_forced=forced, partial=True))
            turns = [*turns, {"role": "assistant", "content": data.get("content") or []}]
        else:
            raise LLMBadResponse(f"the model paused its turn {MAX_CONTINUATIONS + 1} times without finishing")
        completion = self._finish(reply, headers, limit, usage, forced=forced, before="".join(texts))
        if schema is not None and self._adjust.mechanism(dialect) in ("output_config", "forced_tool"):
            completion.text = revert_text(completion.text, schema)
        completion.warnings = warnings
        return completion

    def _body(
        self,
        system: str | None,
        turns: list[dict[str, Any]],
        schema: Mapping[str, Any] | None,
        schema_name: str,
        limit: int,
        stop: Sequence[str],
    ) -> dict[str, Any]:
        dialect, adjust = self._choice.dialect, self._adjust
        body: dict[str, Any] = {"model": self._model, "max_tokens": limit, "messages": turns}
        if dialect.temperature and "temperature" not in adjust.dropped:
            body["temperature"] = self._temperature
        if system is not None and "cache_control" not in adjust.dropped:
            # The run's shared prompt prefix, identical on every call (prompts/layout.py): Anthropic caches up to this
            # breakpoint, llama.cpp's /v1/messages reuses it from its KV cache; a server refusing the field gets text.
            body["system"] = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
        elif system is not None:
            body["system"] = system
        if stop and dialect.max_stop and "stop_sequences" not in adjust.dropped:
            body["stop_sequences"] = list(stop)[: dialect.max_stop]
        if dialect.thinking and self._thinking_budget and "thinking" not in adjust.dropped:
            # budget_tokens counts inside max_tokens, so the answer keeps its own `limit` on top of it
            body["thinking"] = {"type": "enabled", "budget_tokens": self._thinking_budget}
            body["max_tokens"] = limit + self._thinking_budget
        mechanism = adjust.mechanism(dialect)
        if schema is None or mechanism not in ("output_config", "forced_tool"):
            return body
        if mechanism == "output_config":
            wire = to_wire(schema, "anthropic", adjust.removed_keywords)
            body["output_config"] = {"format": {"type": "json_schema", "schema": wire}}
            return body
        body["tools"] = [
            {
                "name": schema_name,
                "description": f"Record the answer as `{schema_name}`, matching the input schema exactly.",
                "input_schema": to_wire(schema, "plain", adjust.removed_keywords),
            }
        ]
        body["tool_choice"] = {"type": "tool", "name": schema_name}
        return body

    async def aclose(self) -> None:
        await self._poster.aclose()

    @staticmethod
    def _decode(data: dict[str, Any]) -> _MessagesResponse:
        try:
            return msgspec.convert(data, _MessagesResponse)
        except msgspec.ValidationError as exc:
            raise LLMBadResponse(f"unexpected messages response shape: {exc}") from exc

    def _finish(
        self, reply: _MessagesResponse, headers: httpx.Headers, limit: int, usage: Usage, *, forced: bool, before: str
    ) -> Completion:
        reason = reply.stop_reason
        if reason == "max_tokens":
            raise LLMTruncated(f"answer truncated at the token limit (max_tokens={limit})", usage=usage)
        if reason == "model_context_window_exceeded":
            raise LLMContextExceeded("the model's context window filled up before the answer ended", usage=usage)
        if reason == "refusal":
            raise LLMRefused("model refused to answer (stop_reason=refusal)")
        text = before + self._text(reply.content, tool_forced=forced)
        if not text.strip():
            raise LLMEmptyAnswer(f"the model's answer is empty (stop_reason={reason})")
        return Completion(
            text=text,
            usage=usage,
            request_id=headers.get("request-id") or reply.id,
            finish_reason=reason,
            model=reply.model or self._model,
        )

    @staticmethod
    def _text(blocks: list[_Block], *, tool_forced: bool, partial: bool = False) -> str:
        tool_use = next((block for block in blocks if block.type == "tool_use"), None)
        if tool_forced and tool_use is not None:
            if tool_use.input is None:
                raise LLMBadResponse("tool_use block without input")
            return json.dumps(tool_use.input, ensure_ascii=False)
        # Thinking blocks are the model's scratchpad, not its answer. llama.cpp accepts a forced tool_choice without
        # enforcing it and answers in a text block: that text is the answer, for the caller to parse like any other.
        texts = [block.text for block in blocks if block.type == "text" and block.text is not None]
        if not texts and tool_use is not None and not partial:
            raise LLMBadResponse("the model answered with a tool call; none was offered")
        return "".join(texts)

    @staticmethod
    def _usage(usage: _Usage) -> Usage:
        cached = usage.cache_read_input_tokens or 0
        # Anthropic's input_tokens excludes cache reads and writes; add them back so that, as with OpenAI,
        # prompt_tokens is the whole prompt and cached_tokens a part of it.
        prompt = (usage.input_tokens or 0) + cached + (usage.cache_creation_input_tokens or 0)
        return Usage(prompt_tokens=prompt, completion_tokens=usage.output_tokens or 0, cached_tokens=cached)


def _add(a: Usage, b: Usage) -> Usage:
    return Usage(
        prompt_tokens=a.prompt_tokens + b.prompt_tokens,
        completion_tokens=a.completion_tokens + b.completion_tokens,
        cached_tokens=a.cached_tokens + b.cached_tokens,
    )


def from_settings(llm: LLMSettings, *, logger: LoggerPort, status: Callable[[str], None] | None) -> LLMPort:
    """The adapter of provider record `anthropic`, from the `llm:` section (no I/O); as the port: mypy checks it."""
    assert llm.base_url is not None and llm.model is not None, "filled by the settings schema"
    return AnthropicLLM(
        base_url=llm.base_url,
        model=llm.model,
        api_key=llm.api_key,  # still a SecretStr: the adapter opens it
        dialect=llm.dialect,
        profile=llm.profile,
        anthropic_version=llm.anthropic_version,
        thinking_budget=llm.thinking_budget,
        read_timeout=llm.read_timeout,
        max_attempts=llm.max_attempts,
        max_tokens=llm.max_tokens,
        temperature=llm.temperature,
        logger=logger,
        status=status,
    )
