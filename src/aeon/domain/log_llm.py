"""Audit-log records of LLM calls: answers, failures, retries, downgrades, clipped prompts, the local server."""

from __future__ import annotations

from typing import Any

from aeon.domain.log_records import LogRecord


class LLMCallRecord(LogRecord, tag="llm_call", kw_only=True):
    purpose: str
    phase: str
    step_id: str | None
    output: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    request_id: str | None
    finish_reason: str | None
    seconds: float
    model: str | None
    cost: float | None


class LLMErrorRecord(LogRecord, tag="llm_error", kw_only=True):
    purpose: str
    error_code: str
    message: str
    status: int | None
    attempt: int


class LLMCallNotSentRecord(LogRecord, tag="llm_call_not_sent", kw_only=True):
    """A call whose worst case would cross a cap (run.max_tokens or run.max_cost): not sent."""

    purpose: str
    cap: str
    worst_case: dict[str, float | None]  # the cap's worst case per measure (tokens, cost)


class LLMRetryRoundRecord(LogRecord, tag="llm_retry_round", kw_only=True):
    """The provider stayed unavailable through the adapter's retries: the run waits, then tries one more round."""

    purpose: str
    reason: str
    phase: str
    wait_seconds: float


class LLMRetryRecord(LogRecord, tag="llm_retry", kw_only=True):
    attempt: int
    cause: str
    status: int | None
    wait_seconds: float


class LLMGiveupRecord(LogRecord, tag="llm_giveup", kw_only=True):
    attempts: int
    cause: str
    status: int | None
    waits: list[float]


class LLMDowngradeRecord(LogRecord, tag="llm_downgrade", kw_only=True):
    """The provider refused a request feature; the adapter drops or changes it for the rest of the run."""

    dialect: str
    refused: str
    change: str
    provider_message: str | None
    status: int | None


class PrefixUncachedRecord(LogRecord, tag="prefix_uncached", kw_only=True):
    """The run's shared prompt prefix (estimated at `prefix_tokens`, on the high side) is shorter than the fewest
    tokens `provider` caches (`cache_min_tokens`): no call of the run is served from the provider's prompt cache."""

    provider: str
    model: str
    profile: str
    prefix_tokens: int
    cache_min_tokens: int
    message: str


class PromptClippedRecord(LogRecord, tag="prompt_clipped", kw_only=True):
    purpose: str
    step_id: str | None
    context_window: int
    room_bytes: int
    clips: list[dict[str, Any]]
    message: str


class LocalServerStartedRecord(LogRecord, tag="local_server_started", kw_only=True):
    """The local server this adapter uses, ready after `seconds`. With `keep_alive` > 0 it is kept running between
    runs for that many idle seconds; `reused`: it was already running (started by an earlier run)."""

    pid: int | None
    port: int
    model: str
    seconds: float
    keep_alive: float = 0.0
    reused: bool = False


class LocalCallTimingsRecord(LogRecord, tag="local_call_timings", kw_only=True):
    """llama-server's own account of one answered call (its `timings`), written just before the call's record: the
    prompt tokens it processed (`prompt_tokens`, those from its KV cache not counted) and the tokens it generated,
    each with its milliseconds."""

    prompt_tokens: int
    prompt_ms: float
    cached_tokens: int
    generated_tokens: int
    generation_ms: float


class LocalServerStoppedRecord(LogRecord, tag="local_server_stopped", kw_only=True):
    pid: int | None


class LocalSlotRestoredRecord(LogRecord, tag="local_slot_restored", kw_only=True):
    file: str
    tokens: int | None
    seconds: float


class LocalSlotSavedRecord(LogRecord, tag="local_slot_saved", kw_only=True, omit_defaults=True):
    file: str
    tokens: int | None
    bytes: int
    seconds: float
    prompt_tokens: int | None = None
    prime_seconds: float | None = None
    replaced: str | None = None  # why the file it replaces could not be restored


class LocalSlotCacheSkippedRecord(LogRecord, tag="local_slot_cache_skipped", kw_only=True):
    step: str
    reason: str
