"""The provider registry: one record per value of `llm.adapter`, read by the settings, the container, the accounting
(through `ModelInfo.provider`) and the durable runs. A new provider is its adapter module and one record here.

Per provider: its name, its wire format (and with it the dialects and their schema transforms, dialects.py), the
default endpoint, model and API-key variable, how `aeon.run(model="name:…")` names a model, where its prices come
from, the time cap of a run that sets none, how its adapter is built from the `llm:` settings section, and the prompt
profile of its models (`profile`, overridden by llm.profile; `prompt_profile` resolves it, `cache_minimum` says the
shortest prefix its prompt cache keeps).
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from aeon.adapters.llm.dialects import Choice, Dialect, Wire
from aeon.domain.llm import ModelInfo, PromptProfile

# Where a provider's prices come from: `config` (the `prices:` section; a model not listed there has an unknown cost)
# or `free` (its `free_models` cost nothing: they run on the user's machine or call no provider).
Pricing = Literal["config", "free"]


class Provider(msgspec.Struct, frozen=True, kw_only=True):
    name: str  # the value of llm.adapter, and "name" in aeon.run(model="name:…")
    # "module:function" that builds the adapter from the validated `llm:` section (no I/O): imported when chosen,
    # so `aeon --version` loads no model client, and an HTTP one loads httpx only when it is used
    builder: str
    wire: Wire | None = None  # the HTTP wire format an `llm.dialect` must belong to; None: no dialect to choose
    base_url: str | None = None  # the provider's own API: the endpoint when llm.base_url is unset
    model: str | None = None  # the model when llm.model is unset
    key_variable: str | None = None  # the API key's environment variable (read into keys.<name>)
    model_key: str = "model"  # the llm setting that the part after the colon of "name:…" fills
    pricing: Pricing = "config"
    free_models: tuple[str, ...] = ()  # pricing "free": the model names that cost nothing (the built-in prices)
    max_seconds: float = 600.0  # run.max_seconds when the config leaves it unset (README "Loops that always stop")
    # True: one client per run (a scripted model answers each run from the start of its script); False: a process
    # that executes many runs (a batch, a worker) may share one client between them (a local server stays warm)
    per_run: bool = False
    # llm settings the provider cannot do without, each with what to say when it is unset
    requires: dict[str, str] = msgspec.field(default_factory=dict)
    # the prompt layout of the provider's own models (domain/llm.py PromptProfile); a server of another kind reached
    # through its wire (llama-server, vLLM, Ollama) gets `base`: what it serves may be a base model
    profile: PromptProfile = "base"


# run.max_seconds by provider: the default call cap (30) at what one call may take. A 270M local model on 2 busy
# cores answers in 10-30 s; a hosted model in seconds, a reasoning one up to ~20 s; a scripted one at once, its tools
# within tools.timeout (60).
_ALL = (
    Provider(
        name="local",
        builder="aeon.adapters.llm.local_config:from_settings",
        wire="openai",  # llama-server's OpenAI-compatible endpoint
        model_key="model_path",
        pricing="free",
        free_models=("gemma-3-270m",),
        max_seconds=900.0,
    ),
    Provider(
        name="openai",
        builder="aeon.adapters.llm.openai_compat:from_settings",
        wire="openai",
        base_url="https://api.openai.com/v1",
        model="gpt-5.4-mini",
        key_variable="OPENAI_API_KEY",
        profile="chat",
    ),
    Provider(
        name="anthropic",
        builder="aeon.adapters.llm.anthropic:from_settings",
        wire="anthropic",
        base_url="https://api.anthropic.com",
        model="claude-haiku-5-5",
        key_variable="ANTHROPIC_API_KEY",
        profile="chat",
    ),
    Provider(
        name="scripted",
        builder="aeon.adapters.llm.scripted:from_settings",
        model_key="script",
        pricing="free",
        free_models=("scripted",),
        max_seconds=120.0,
        per_run=True,
        requires={
            "script": "the scripted adapter answers from a YAML file of responses "
            "(set llm.script in a --config file, or AEON_LLM_SCRIPT)"
        },
    ),
)
PROVIDERS: dict[str, Provider] = {p.name: p for p in _ALL}


def prompt_profile(adapter: str, dialect: Dialect | None, setting: PromptProfile | None) -> tuple[PromptProfile, str]:
    """The prompt profile of a model and why: llm.profile when set; else the provider record's for the provider's own
    API (a dialect naming a provider) or an adapter with no wire of choice (local, scripted); else `base`. A dialect
    that sends no schema gets `base` whatever is set: chat prompts leave the answer's shape to the schema."""
    if dialect is not None and dialect.structured == "none":
        return "base", f"{dialect.name} sends no schema: the prompts show the answer's shape"
    if setting is not None:
        return setting, "llm.profile"
    provider = PROVIDERS[adapter]
    if dialect is not None and dialect.provider is None and provider.base_url is not None:
        return "base", f"auto: {dialect.name} may serve a base model"
    return provider.profile, f"auto: provider {adapter}"


# The shortest prompt prefix each provider's cache keeps, in tokens (their docs, 2026): OpenAI 1,024 for every model;
# Anthropic by model, first match wins, an unlisted model the largest minimum (so a prefix is never said cached when
# it may not be). llama-server and the like cache any prefix: None.
OPENAI_CACHE_MIN = 1024
ANTHROPIC_CACHE_MIN: tuple[tuple[str, int], ...] = (
    (r"opus-4-[56]|haiku-4-5", 4096),
    (r"sonnet-4-6", 2048),
    (r"3-5-haiku|3-haiku|haiku-3", 2048),
    (r"sonnet-4-5|opus-4-1|opus-4|sonnet-4|3-7-sonnet|3-5-sonnet|3-opus|sonnet-3", 1024),
)
ANTHROPIC_CACHE_MAX = 4096


def cache_minimum(dialect: Dialect, model: str) -> int | None:
    """The fewest prompt tokens the provider behind `dialect` caches for `model`; None: no minimum to report."""
    if dialect.provider == "openai":
        return OPENAI_CACHE_MIN
    if dialect.provider != "anthropic":
        return None
    bare = model.strip().lower()
    return next((n for pattern, n in ANTHROPIC_CACHE_MIN if re.search(pattern, bare)), ANTHROPIC_CACHE_MAX)


def describe(choice: Choice, adapter: str, model: str, base_url: str, setting: PromptProfile | None) -> ModelInfo:
    """What `LLMPort.describe` reports for an HTTP adapter: its dialect, prompt profile and cache minimum."""
    profile, source = prompt_profile(adapter, choice.dialect, setting)
    info = choice.describe(adapter, model, base_url)
    minimum = cache_minimum(choice.dialect, model)
    return msgspec.structs.replace(info, profile=profile, profile_source=source, cache_min_tokens=minimum)
