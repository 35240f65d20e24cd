"""The provider registry: one record per value of `llm.adapter`, read by the settings, the container, the accounting
(through `ModelInfo.provider`) and the durable runs. A new provider is its adapter module and one record here.

Per provider: its name, its wire format (and with it the dialects and their schema transforms, dialects.py), the
default endpoint, model and API-key variable, how `aeon.run(model="name:…")` names a model, where its prices come
from, the time cap of a run that sets none, and how its adapter is built from the `llm:` settings section.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

import msgspec

from aeon.adapters.llm.dialects import Wire
from aeon.application.ports import LLMPort, LoggerPort

if TYPE_CHECKING:
    from aeon.adapters.llm.settings import LLMSettings

Status = Callable[[str], None] | None
# Where a provider's prices come from: `config` (the `prices:` section; a model not listed there has an unknown cost)
# or `free` (its `free_models` cost nothing: they run on the user's machine or call no provider).
Pricing = Literal["config", "free"]


class Builder(Protocol):
    def __call__(self, llm: LLMSettings, *, logger: LoggerPort, status: Status) -> LLMPort: ...


class Provider(msgspec.Struct, frozen=True, kw_only=True):
    name: str  # the value of llm.adapter, and "name" in aeon.run(model="name:…")
    build: Builder  # the adapter, from the validated `llm:` section (no I/O)
    wire: Wire | None = None  # the HTTP wire format an `llm.dialect` must belong to; None: no dialect to choose
    base_url: str | None = None  # the provider's own API: the endpoint when llm.base_url is unset
    model: str | None = None  # the model when llm.model is unset
    key_variable: str | None = None  # the API key's environment variable (read into keys.<name>)
    own_dialects: tuple[str, ...] = ()  # dialects of the provider's own API: gen_ai.provider.name is `name`
    model_key: str = "model"  # the llm setting that the part after the colon of "name:…" fills
    pricing: Pricing = "config"
    free_models: tuple[str, ...] = ()  # pricing "free": the model names that cost nothing (the built-in prices)
    max_seconds: float = 600.0  # run.max_seconds when the config leaves it unset (README "Loops that always stop")
    # True: one client per run (a scripted model answers each run from the start of its script); False: a process
    # that executes many runs (a batch, a worker) may share one client between them (a local server stays warm)
    per_run: bool = False


def _local(llm: LLMSettings, *, logger: LoggerPort, status: Status) -> LLMPort:
    from aeon.adapters.llm.local import LocalLlamaLLM

    return LocalLlamaLLM(
        model_path=llm.model_path,
        cache_dir=llm.cache_dir,
        ctx_size=llm.ctx_size,
        threads=llm.threads,
        startup_timeout=llm.startup_timeout,
        read_timeout=llm.read_timeout,
        max_tokens=llm.max_tokens,
        temperature=llm.temperature,
        logger=logger,
        progress=status,
        slot_cache_dir=llm.slot_cache_dir or default_slot_cache_dir(llm.cache_dir),
        slot_cache_bytes=llm.slot_cache_mb * 2**20,
    )


def default_slot_cache_dir(cache_dir: Path | None) -> Path | None:
    """Where the local server's slot files go unless llm.slot_cache_dir says: beside the model when llm.cache_dir
    names a folder, else the user's cache folder ($XDG_CACHE_HOME, or ~/.cache); None without a home folder."""
    if cache_dir is not None:
        return cache_dir / "llama-slots"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    try:
        base = Path(xdg) if Path(xdg).is_absolute() else Path.home() / ".cache"
    except RuntimeError:  # no home folder to be found
        return None
    return base / "aeon" / "llama-slots"


def _scripted(llm: LLMSettings, *, logger: LoggerPort, status: Status) -> LLMPort:
    from aeon.adapters.llm.scripted import ScriptedLLM

    assert llm.script is not None, "the settings schema requires llm.script for the scripted adapter"
    return ScriptedLLM.from_file(llm.script)


def _openai(llm: LLMSettings, *, logger: LoggerPort, status: Status) -> LLMPort:
    from aeon.adapters.llm.openai_compat import OpenAICompatLLM

    assert llm.base_url is not None and llm.model is not None, "filled by the settings schema"
    return OpenAICompatLLM(
        base_url=llm.base_url,
        model=llm.model,
        api_key=llm.api_key,  # still a SecretStr: the adapter opens it
        dialect=llm.dialect,
        read_timeout=llm.read_timeout,
        max_attempts=llm.max_attempts,
        max_tokens=llm.max_tokens,
        temperature=llm.temperature,
        logger=logger,
        status=status,
    )


def _anthropic(llm: LLMSettings, *, logger: LoggerPort, status: Status) -> LLMPort:
    from aeon.adapters.llm.anthropic import AnthropicLLM

    assert llm.base_url is not None and llm.model is not None, "filled by the settings schema"
    return AnthropicLLM(
        base_url=llm.base_url,
        model=llm.model,
        api_key=llm.api_key,  # still a SecretStr: the adapter opens it
        dialect=llm.dialect,
        anthropic_version=llm.anthropic_version,
        thinking_budget=llm.thinking_budget,
        read_timeout=llm.read_timeout,
        max_attempts=llm.max_attempts,
        max_tokens=llm.max_tokens,
        temperature=llm.temperature,
        logger=logger,
        status=status,
    )


# run.max_seconds by provider: the default call cap (30) at what one call may take. A 270M local model on 2 busy
# cores answers in 10-30 s; a hosted model in seconds, a reasoning one up to ~20 s; a scripted one at once, its tools
# within tools.timeout (60).
_ALL = (
    Provider(
        name="local",
        build=_local,
        wire="openai",  # llama-server's OpenAI-compatible endpoint
        model_key="model_path",
        pricing="free",
        free_models=("gemma-3-270m",),
        max_seconds=900.0,
    ),
    Provider(
        name="openai",
        build=_openai,
        wire="openai",
        base_url="https://api.openai.com/v1",
        model="gpt-5.4-mini",
        key_variable="OPENAI_API_KEY",
        own_dialects=("openai-chat", "openai-reasoning"),
    ),
    Provider(
        name="anthropic",
        build=_anthropic,
        wire="anthropic",
        base_url="https://api.anthropic.com",
        model="claude-haiku-5-5",
        key_variable="ANTHROPIC_API_KEY",
        own_dialects=("anthropic", "anthropic-thinking", "anthropic-tool"),
    ),
    Provider(
        name="scripted",
        build=_scripted,
        model_key="script",
        pricing="free",
        free_models=("scripted",),
        max_seconds=120.0,
        per_run=True,
    ),
)
PROVIDERS: dict[str, Provider] = {p.name: p for p in _ALL}


def build(llm: LLMSettings, *, logger: LoggerPort, status: Status) -> LLMPort:
    """The model client `llm.adapter` names, built by its provider record from the `llm:` section (no I/O)."""
    return PROVIDERS[llm.adapter].build(llm, logger=logger, status=status)


def provider_name(adapter: str, dialect: str) -> str:
    """gen_ai.provider.name: the provider's name when `dialect` is one of its own API's, else the dialect spoken."""
    provider = PROVIDERS.get(adapter)
    if provider is not None and dialect in provider.own_dialects:
        return provider.name
    return dialect or adapter or "unknown"
