"""Values exchanged with a language model: messages, completions and token usage."""

from __future__ import annotations

from typing import Literal

import msgspec

# The answer tokens a call may take unless told: llm.max_tokens' default, and what the kernel prices a call's worst
# case at when its model client was made without settings.
DEFAULT_MAX_TOKENS = 512

# How the prompt of a JSON repair call opens (its guide's heading, then its labelled slots): the application writes
# it (llm/prompts/templates.py), a scripted model's diagnostics recognise it (adapters/llm/expected.py).
JSON_REPAIR_OPENINGS = ("## Repair JSON\n", "Schema: ")


# How a run's prompts are laid out for the model (application/llm/prompts/): `base`, a completion model that follows
# worked examples (the local Gemma 3 270M); `chat`, an instruction-tuned model with native structured outputs (no
# examples, the answer's schema sent once, in the request); `tools`, a chat model that also calls tools natively (laid
# out as `chat`). The provider registry gives each provider's (adapters/llm/providers.py); llm.profile overrides it.
PromptProfile = Literal["base", "chat", "tools"]
PROMPT_PROFILES: tuple[PromptProfile, ...] = ("base", "chat", "tools")


class Message(msgspec.Struct, frozen=True, kw_only=True):
    role: str  # "system" | "user" | "assistant"
    content: str


class Usage(msgspec.Struct, kw_only=True):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens served from the provider's prompt/KV cache


class Completion(msgspec.Struct, kw_only=True):
    text: str
    usage: Usage = msgspec.field(default_factory=Usage)
    request_id: str | None = None
    finish_reason: str | None = None
    model: str | None = None
    warnings: list[str] = msgspec.field(default_factory=list)  # what the adapter had to change to be accepted


class ModelInfo(msgspec.Struct, frozen=True, kw_only=True):
    """What answers a run's LLM calls (`LLMPort.describe`): the adapter (a provider name of the registry), the model,
    the provider dialect spoken and why it was chosen; `provider` is gen_ai.provider.name (the provider's own API:
    its name; any other server: the dialect); `context_window` the tokens a prompt and its answer may take together
    (None: not known); `scripted_request` the request a scripted model's script was written for; `profile` the
    prompt layout the model gets and why (`profile_source`); `cache_min_tokens` the shortest prompt prefix the
    provider caches (None: no minimum, or no cache to speak of)."""

    adapter: str
    model: str
    dialect: str
    dialect_source: str
    provider: str
    base_url: str | None = None
    context_window: int | None = None
    scripted_request: str | None = None
    profile: PromptProfile = "base"
    profile_source: str = "default"
    cache_min_tokens: int | None = None

    def fields(self) -> dict[str, str]:
        """The `llm` field of the run_start record, as it has always been written: strings, unset ones left out,
        without `provider` (a span attribute)."""
        out = {"adapter": self.adapter, "model": self.model}
        if self.base_url is not None:
            out["base_url"] = self.base_url
        out |= {"dialect": self.dialect, "dialect_source": self.dialect_source}
        if self.context_window is not None:
            out["context_window"] = str(self.context_window)
        if self.scripted_request:
            out["scripted_request"] = self.scripted_request
        if self.profile != "base":  # a base-profile run's record stays as it was before profiles
            out |= {"profile": self.profile, "profile_source": self.profile_source}
        return out
