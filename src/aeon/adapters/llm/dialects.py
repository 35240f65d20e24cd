"""Provider dialects as data: what each endpoint and model family takes, chosen by config or detected from URL + model.

A dialect belongs to one wire format (`openai` chat completions or `anthropic` messages) and says which token-limit
parameter the endpoint takes, whether it takes a temperature and stop sequences (and how many), how it constrains
output to a JSON schema, and which schema transformer makes our schemas acceptable to it (adapters/llm/wire_schemas.py).
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

import msgspec

from aeon.application.errors import ConfigurationError
from aeon.domain.llm import ModelInfo

Wire = Literal["openai", "anthropic"]
# How a JSON schema reaches the model: OpenAI `response_format` (strict or not), OpenAI JSON mode, Anthropic's
# native `output_config.format`, one forced tool whose input is the answer, or not at all (few-shot prompt + repair).
Structured = Literal["strict_json_schema", "json_schema", "json_object", "output_config", "forced_tool", "none"]
# The schema transformer: `strict` (OpenAI strict mode), `anthropic` (native structured outputs), `grammar`
# (grammar-constrained local servers: closed objects, bounded strings), `plain` (the schema as Aeon wrote it).
SchemaProfile = Literal["strict", "anthropic", "grammar", "plain"]


class Dialect(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    wire: Wire
    summary: str
    token_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    temperature: bool = True
    max_stop: int | None = 4  # None: no stop sequences at all; OpenAI takes at most 4
    structured: Structured = "json_schema"
    schema_profile: SchemaProfile = "grammar"
    thinking: bool = False  # Anthropic extended thinking may be on: never force a tool, skip thinking blocks
    # llama.cpp: with a JSON schema, raw newlines are banned (`logit_bias` -100, keyed by text), so the grammar's
    # optional whitespace is a space and the answer one line, as the prompts' examples are. Measured on Gemma 3 270M
    # (the recorded simple request): 222 tokens generated over its two calls, pretty-printed, against 182 on one line.
    compact_json: bool = False
    # tokens a prompt and its answer may take together, unless llm.context_window says: the provider's own models'
    # smallest current window; for a server of unknown size, llama-server's and Ollama's common 8192
    context_window: int = 8192
    # gen_ai.provider.name for a provider's own API (its name); None: any other server, named by the dialect
    provider: str | None = None


_ALL = (
    Dialect(
        name="openai-chat",
        wire="openai",
        summary="OpenAI chat models (gpt-4o, gpt-4.1, gpt-5*-chat): strict structured outputs",
        token_param="max_completion_tokens",
        structured="strict_json_schema",
        schema_profile="strict",
        context_window=128_000,
        provider="openai",
    ),
    Dialect(
        name="openai-reasoning",
        wire="openai",
        summary="OpenAI reasoning models (o-series, gpt-5 family): no temperature, no stop, strict structured outputs",
        token_param="max_completion_tokens",
        temperature=False,
        max_stop=None,
        structured="strict_json_schema",
        schema_profile="strict",
        context_window=128_000,
        provider="openai",
    ),
    Dialect(
        name="llamacpp",
        wire="openai",
        summary="llama.cpp llama-server: grammar-constrained one-line json_schema, any number of stop sequences",
        max_stop=16,
        compact_json=True,
    ),
    Dialect(name="vllm", wire="openai", summary="vLLM: guided-decoding json_schema", max_stop=16),
    Dialect(name="ollama", wire="openai", summary="Ollama's OpenAI-compatible endpoint: json_schema", max_stop=4),
    Dialect(
        name="openai-compatible",
        wire="openai",
        summary="a generic OpenAI-compatible server: max_tokens, non-strict json_schema",
        schema_profile="plain",
    ),
    Dialect(
        name="anthropic",
        wire="anthropic",
        summary="Anthropic current models: native structured outputs, no sampling parameters",
        temperature=False,
        max_stop=8,
        structured="output_config",
        schema_profile="anthropic",
        context_window=200_000,
        provider="anthropic",
    ),
    Dialect(
        name="anthropic-thinking",
        wire="anthropic",
        summary="Anthropic with extended thinking, or an always-thinking model: never a forced tool",
        temperature=False,
        max_stop=8,
        structured="output_config",
        schema_profile="anthropic",
        thinking=True,
        context_window=200_000,
        provider="anthropic",
    ),
    Dialect(
        name="anthropic-tool",
        wire="anthropic",
        summary="an Anthropic-format server that enforces tools: the answer is one forced tool call",
        temperature=False,
        max_stop=8,
        structured="forced_tool",
        schema_profile="plain",
        provider="anthropic",
    ),
    Dialect(
        name="anthropic-compatible",
        wire="anthropic",
        summary="an Anthropic-format server that ignores tools and output_config (llama.cpp): plain text + repair",
        max_stop=8,
        structured="none",
        schema_profile="plain",
    ),
)
DIALECTS: dict[str, Dialect] = {d.name: d for d in _ALL}

_OPENAI_HOSTS = ("api.openai.com", ".openai.azure.com")
_OPENAI_MODEL = re.compile(r"^(gpt-|o\d|chatgpt-|codex-)")
_REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")


class Choice(msgspec.Struct, frozen=True, kw_only=True):
    dialect: Dialect
    source: str  # why this dialect: "llm.dialect", or what auto-detection saw

    def describe(self, adapter: str, model: str, base_url: str) -> ModelInfo:
        """What `LLMPort.describe` reports for an HTTP adapter speaking this dialect."""
        return ModelInfo(
            adapter=adapter,
            model=model,
            base_url=base_url,
            dialect=self.dialect.name,
            dialect_source=self.source,
            provider=self.dialect.provider or self.dialect.name,
            context_window=self.dialect.context_window,
        )


def _model_id(model: str) -> str:
    """The bare model id: lower-cased, without a router's vendor prefix ("openai/o3" → "o3")."""
    return model.strip().lower().rsplit("/", 1)[-1]


def is_reasoning_model(model: str) -> bool:
    """o-series and the gpt-5 family, except the `*-chat*` models, which are chat models."""
    bare = _model_id(model)
    return bool(_REASONING_MODEL.match(bare)) and "-chat" not in bare


def detect(wire: Wire, base_url: str, model: str, *, thinking: bool = False) -> Choice:
    """The dialect for an endpoint and model, from the base URL's host and port and the model name."""
    parts = urlsplit(base_url if "//" in base_url else f"//{base_url}")
    host, port, bare = (parts.hostname or "").lower(), parts.port, _model_id(model)
    if wire == "anthropic":
        if thinking:
            return Choice(dialect=DIALECTS["anthropic-thinking"], source="auto: thinking is configured")
        if host == "api.anthropic.com" or bare.startswith("claude"):
            return Choice(dialect=DIALECTS["anthropic"], source=f"auto: {host or 'model'} serves Anthropic models")
        return Choice(dialect=DIALECTS["anthropic-compatible"], source=f"auto: {model!r} is not an Anthropic model")
    openai_host = any(host == h or (h.startswith(".") and host.endswith(h)) for h in _OPENAI_HOSTS)
    if openai_host or _OPENAI_MODEL.match(bare):
        family = "openai-reasoning" if is_reasoning_model(bare) else "openai-chat"
        return Choice(dialect=DIALECTS[family], source=f"auto: model {model!r}")
    if port == 11434 or "ollama" in host:
        return Choice(dialect=DIALECTS["ollama"], source="auto: Ollama's port or host name")
    if "vllm" in host or port == 8000:
        return Choice(dialect=DIALECTS["vllm"], source="auto: vLLM's port or host name")
    if port == 8080 or "llama" in host:
        return Choice(dialect=DIALECTS["llamacpp"], source="auto: llama-server's port or host name")
    return Choice(dialect=DIALECTS["openai-compatible"], source=f"auto: unknown server at {host or base_url}")


def choose(wire: Wire, name: str | None, base_url: str, model: str, *, thinking: bool = False) -> Choice:
    """`name` when given (it must belong to `wire`), else `detect`. Raises ConfigurationError for a bad name."""
    if name is None:
        return detect(wire, base_url, model, thinking=thinking)
    dialect = DIALECTS.get(name)
    if dialect is None or dialect.wire != wire:
        valid = ", ".join(d.name for d in _ALL if d.wire == wire)
        raise ConfigurationError(
            f"llm.dialect {name!r} is not a dialect of the {wire} wire format (use one of: {valid})"
        )
    return Choice(dialect=dialect, source="llm.dialect")
