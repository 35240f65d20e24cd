"""Whether a run's shared prompt prefix can be cached by the provider in use: a provider caches a repeated prefix
only from a minimum length on (OpenAI 1,024 tokens; Anthropic 1,024 to 4,096 by model; llama-server any length:
adapters/llm/providers.py `cache_minimum`), so a shorter prefix is sent in full on every call. The prefix is
measured as the prompt budget measures a message (prompt_budget.estimate_tokens, on the high side), so a prefix
said too short is too short."""

from __future__ import annotations

from aeon.application.llm.prompt_budget import estimate_tokens
from aeon.domain.llm import ModelInfo
from aeon.domain.log_llm import PrefixUncachedRecord
from aeon.domain.progress import PrefixUncached


def uncached(prefix: str, info: ModelInfo) -> tuple[PrefixUncachedRecord, PrefixUncached] | None:
    """The record and the progress event saying that `prefix` is under the cache minimum of the model `info`
    describes; None when it is long enough, or the provider has no minimum (or no prefix is sent)."""
    minimum = info.cache_min_tokens
    tokens = estimate_tokens(prefix) if prefix else 0
    if minimum is None or not prefix or tokens >= minimum:
        return None
    message = (
        f"the shared prompt prefix (~{tokens:,} tokens) is under the {minimum:,} tokens {info.provider} caches "
        f"for {info.model}: every call sends it uncached"
    )
    record = PrefixUncachedRecord(
        provider=info.provider,
        model=info.model,
        profile=info.profile,
        prefix_tokens=tokens,
        cache_min_tokens=minimum,
        message=message,
    )
    return record, PrefixUncached(provider=info.provider, prefix_tokens=tokens, cache_min_tokens=minimum)
