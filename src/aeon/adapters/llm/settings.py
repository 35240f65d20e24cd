"""The `llm:` and `keys:` settings sections, and `build`: the model client the provider registry names, from them
(`open_llm`: as a container resource; `preflight`: what stops a run before it starts). Their defaults are
adapters/llm/defaults.py's; which providers exist (and with them the keys section) providers.py's."""

from __future__ import annotations

import importlib
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import Field, SecretStr, create_model, field_validator, model_validator

from aeon.adapters.llm import defaults
from aeon.adapters.llm.dialects import DIALECTS
from aeon.adapters.llm.providers import PROVIDERS
from aeon.application.errors import ConfigurationError
from aeon.application.ports import LLMPort, LoggerPort
from aeon.application.settings_section import Section
from aeon.domain.llm import PromptProfile


def _blank_is_unset(v: Any) -> Any:
    return None if isinstance(v, str) and not v.strip() else v


class LLMSettings(Section):
    adapter: str = Field("local", description="a provider of the registry (adapters/llm/providers.py)")
    script: Path | None = None
    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    # the provider dialect (adapters/llm/dialects.py); unset: detected from base_url and model
    dialect: str | None = None
    # the prompt layout (domain/llm.py PromptProfile): base (worked examples), chat or tools (no examples, the
    # answer's schema only in the request); unset: the provider's (providers.py: local base, openai and anthropic
    # chat for their own models, base for any other server)
    profile: PromptProfile | None = None
    anthropic_version: str = defaults.ANTHROPIC_VERSION
    thinking_budget: int | None = Field(None, ge=1024, description="Anthropic extended thinking budget (tokens)")
    read_timeout: float = Field(defaults.READ_TIMEOUT, gt=0)
    max_attempts: int = Field(defaults.MAX_ATTEMPTS, ge=1, le=10)
    max_tokens: int = Field(defaults.MAX_TOKENS, ge=1)
    # tokens a prompt and its answer may take together (README "What the model sees"); unset: the adapter's own
    # (local: ctx_size; openai/anthropic: by dialect, 128,000 / 200,000 for the providers' own models, else 8,192)
    context_window: int | None = Field(None, ge=1024)
    temperature: float = Field(defaults.TEMPERATURE, ge=0.0, le=2.0)
    # local adapter (llama.cpp's llama-server with Gemma 3 270M)
    model_path: Path | None = None
    cache_dir: Path | None = None
    # the local server's saved KV cache of the shared prompt prefix (README "Prompt caching"); unset: the default
    # folder (local_config.default_slot_cache_dir); slot_cache_mb 0 keeps none
    slot_cache_dir: Path | None = None
    slot_cache_mb: int = Field(defaults.SLOT_CACHE_MB, ge=0)
    ctx_size: int = Field(defaults.CTX_SIZE, ge=512)
    threads: int | None = Field(None, ge=1)
    # seconds the local server stays running after the last call of any run, for the next run to find it warm
    # (adapters/llm/_kept_server.py); 0: each run starts its own server and stops it when it ends
    keep_alive: float = Field(defaults.KEEP_ALIVE, ge=0)
    startup_timeout: float = Field(defaults.STARTUP_TIMEOUT, gt=0)

    _blanks = field_validator(
        "api_key",
        "base_url",
        "model",
        "script",
        "model_path",
        "cache_dir",
        "slot_cache_dir",
        "dialect",
        "profile",
        mode="before",
    )(_blank_is_unset)

    @field_validator("adapter")
    @classmethod
    def _a_registered_provider(cls, v: str) -> str:
        if v not in PROVIDERS:
            names = [repr(name) for name in PROVIDERS]
            raise ValueError(f"Input should be {', '.join(names[:-1])} or {names[-1]}")
        return v

    @model_validator(mode="after")
    def _dialect_fits_adapter(self) -> LLMSettings:
        wire = PROVIDERS[self.adapter].wire
        if self.dialect is None or wire is None:  # no wire (scripted): no dialect to check
            return self
        dialect = DIALECTS.get(self.dialect)
        if dialect is None or dialect.wire != wire:
            names = ", ".join(d.name for d in DIALECTS.values() if d.wire == wire)
            raise ValueError(f"dialect {self.dialect!r} does not fit adapter {self.adapter!r} (use one of: {names})")
        return self


class _Keys(Section):
    """API keys by provider, read from each provider's usual environment variable (config/layers.py)."""

    _blanks = field_validator("*", mode="before")(_blank_is_unset)


# one optional secret per provider that has an API key variable: keys.openai, keys.anthropic, …
KeysSettings: type[_Keys] = create_model(
    "KeysSettings",
    __base__=_Keys,
    **{p.name: (SecretStr | None, None) for p in PROVIDERS.values() if p.key_variable},  # type: ignore[call-overload]
)


def key_layer() -> dict[str, Any]:
    """The `keys:` section as config data: each provider's key from its variable (empty when unset)."""
    return {"keys": {p.name: f"${{{p.key_variable}:}}" for p in PROVIDERS.values() if p.key_variable}}


def completed(llm: LLMSettings, keys: _Keys) -> LLMSettings:
    """The `llm:` section with a provider adapter's endpoint, model and key filled from the defaults and `keys`;
    ValueError naming in one line what is missing."""
    provider = PROVIDERS[llm.adapter]
    for setting, why in provider.requires.items():
        if getattr(llm, setting) is None:
            raise ValueError(f"llm.{setting} is not set: {why}")
    if provider.base_url is None:  # no API of its own (local, scripted): nothing to fill
        return llm
    url, model, key_var = provider.base_url, provider.model, provider.key_variable
    key = llm.api_key or getattr(keys, llm.adapter, None)
    filled = llm.model_copy(update={"base_url": llm.base_url or url, "model": llm.model or model, "api_key": key})
    if filled.base_url == url and key is None:
        raise ValueError(
            f"no API key for {url}: set {key_var} (or point AEON_LLM_BASE_URL at a server that needs none)"
        )
    return filled


def model_overrides(model: str) -> dict[str, str]:
    """A model named as "provider:name" as llm settings: "openai:gpt-4o-mini", "anthropic:claude-haiku-5-5",
    "local" (or "local:/path/to/model.gguf"), "scripted:answers.yaml". Everything else about the model (endpoint,
    key, dialect) comes from the config and the environment, as for `llm.adapter`. Raises ConfigurationError."""
    provider, _, name = (part.strip() for part in model.partition(":"))
    if provider not in PROVIDERS:
        known = ", ".join(
            f"{p.name}:{'MODEL' if p.model_key == 'model' else p.model_key.upper()}" for p in PROVIDERS.values()
        )
        raise ConfigurationError(f"model {model!r}: unknown provider {provider!r} (use one of: {known})")
    return {"llm.adapter": provider, **({f"llm.{PROVIDERS[provider].model_key}": name} if name else {})}


Status = Callable[[str], None] | None


class Builder(Protocol):
    def __call__(self, llm: LLMSettings, *, logger: LoggerPort, status: Status) -> LLMPort: ...


def build(llm: LLMSettings, *, logger: LoggerPort, status: Status) -> LLMPort:
    """The model client `llm.adapter` names, made by its provider record's builder from this section (no I/O)."""
    module, _, function = PROVIDERS[llm.adapter].builder.partition(":")
    builder: Builder = getattr(importlib.import_module(module), function)
    return builder(llm, logger=logger, status=status)


async def open_llm(client: LLMPort, log: LoggerPort) -> AsyncIterator[LLMPort]:
    """The model client chosen by llm.adapter, closed (connections, a local server) when the container shuts down.

    `log` only orders the shutdown: the client is closed before the log, which records it (a local server stopped).
    """
    try:
        yield client
    finally:
        await client.aclose()


def preflight(llm: LLMPort, *, calls_model: bool = True) -> str | None:
    """A setup problem that stops the run before it starts, or None: a configured model file that is not there,
    and — for a run that will ask the model something (`calls_model`) — the local model's extra not installed."""
    local = sys.modules.get("aeon.adapters.llm.local")  # not loaded: the model is not the local one
    if local is None or not isinstance(llm, local.LocalLlamaLLM):
        return None
    problem: str | None = llm.preflight() if calls_model else llm.config_problem()
    return problem
