"""The one door to the LLM: budget checks before and after every call, usage accounting and call logging."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from aeon.application.context import RunContext
from aeon.application.errors import LLMError, LLMTruncated, LLMUnavailable
from aeon.application.ports import LLMPort
from aeon.domain.llm import Completion, Message

# Before the phase contract's one extra round after an unavailable provider: the provider's own Retry-After (up to a
# minute), else the longest backoff of the HTTP retry policy.
PHASE_RETRY_WAIT = 8.0
MAX_PHASE_RETRY_WAIT = 60.0


def _both_rounds(first: LLMUnavailable, second: LLMUnavailable, pause: float) -> LLMUnavailable:
    """One error for both rounds: every attempt, every wait, the last cause."""
    attempts = first.attempts + second.attempts
    waits = (*first.waits, *second.waits)
    within = f"waited {', '.join(f'{w:.1f} s' for w in waits)} within rounds, " if waits else "waited "
    return LLMUnavailable(
        f"provider unavailable after {attempts} attempts in 2 rounds ({second.cause}; {within}{pause:.1f} s between)",
        status=second.status,
        attempts=attempts,
        cause=second.cause,
        waits=waits,
        retry_after=second.retry_after,
    )


class LLMGateway:
    """Wraps an LLMPort for one run. Every call is counted against the budget and written to the event log."""

    def __init__(self, llm: LLMPort, ctx: RunContext, *, max_tokens: int | None = None, preamble: str = "") -> None:
        self._llm = llm
        self._ctx = ctx
        self._max_tokens = max_tokens
        # One identical first message on every call (house rules + tool catalogue): providers that cache prompt
        # prefixes (llama.cpp's KV cache, OpenAI and Anthropic prompt caching) reuse it across all prompt kinds.
        self._preamble = [Message(role="system", content=preamble)] if preamble else []

    async def _call(
        self,
        purpose: str,
        messages: Sequence[Message],
        schema: Mapping[str, Any] | None,
        schema_name: str,
        stop: Sequence[str],
    ) -> Completion:
        """One call through the port, ended by run.max_seconds wherever its time goes (answer, retries, waits)."""
        try:
            async with asyncio.timeout(self._ctx.remaining_seconds()):
                return await self._llm.complete(
                    [*self._preamble, *messages],
                    schema=schema,
                    schema_name=schema_name,
                    max_tokens=self._max_tokens,
                    stop=stop,
                )
        except TimeoutError:
            self._ctx.record_failed_call(None)
            raise self._ctx.out_of_time(f"during the LLM call for {purpose}") from None

    async def _pause(self, purpose: str, exc: LLMUnavailable) -> float:
        ctx = self._ctx
        wait = min(exc.retry_after, MAX_PHASE_RETRY_WAIT) if exc.retry_after else PHASE_RETRY_WAIT
        ctx.logger.emit("phase_retry", purpose=purpose, reason=exc.code, phase=ctx.context_key, wait_seconds=wait)
        ctx.notify("llm_retry_round", {"purpose": purpose, "attempts": exc.attempts, "cause": exc.cause, "wait": wait})
        try:
            async with asyncio.timeout(ctx.remaining_seconds()):
                await ctx.clock.sleep(wait)
        except TimeoutError:
            raise ctx.out_of_time(f"while waiting to call the provider again for {purpose}") from None
        return wait

    async def complete(
        self,
        purpose: str,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
        stop: Sequence[str] = (),
    ) -> Completion:
        ctx = self._ctx
        ctx.check_context()
        first: LLMUnavailable | None = None
        pause = 0.0
        for attempt in (1, 2):
            ctx.check_caps(f"before LLM call for {purpose}")
            ctx.notify("llm_start", {"purpose": purpose, "phase": ctx.phase, "step": ctx.state.current_step})
            t0 = ctx.clock.monotonic()
            try:
                completion = await self._call(purpose, messages, schema, schema_name, stop)
                break
            except LLMError as exc:
                # a failed request was still sent: it counts against the call cap, a cut-off answer's tokens too
                ctx.record_failed_call(exc.usage if isinstance(exc, LLMTruncated) else None)
                ctx.logger.emit(
                    "llm_error",
                    purpose=purpose,
                    error_code=exc.code,
                    message=str(exc),
                    status=exc.status,
                    attempt=attempt,
                )
                if not isinstance(exc, LLMUnavailable):
                    raise
                if first is not None:
                    raise _both_rounds(first, exc, pause) from exc
                # The phase contract classifies an unavailable provider as retryable: one more round (05 FR-011),
                # after a pause, so that a rate-limited provider is not hit again at once.
                first = exc
                pause = await self._pause(purpose, exc)
        seconds = max(ctx.clock.monotonic() - t0, 0.0)
        u = completion.usage
        ctx.logger.emit(
            "llm_call",
            purpose=purpose,
            phase=ctx.phase,
            step_id=ctx.state.current_step,
            output=completion.text,
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            cached_tokens=u.cached_tokens,
            request_id=completion.request_id,
            finish_reason=completion.finish_reason,
            seconds=round(seconds, 6),
        )
        for warning in completion.warnings:  # a parameter the provider refused, dropped for the rest of the run
            ctx.warn(warning)
        rate = u.completion_tokens / seconds if seconds >= 0.001 else None  # instant (scripted) calls have no rate
        ctx.notify("llm_end", {"purpose": purpose, "completion_tokens": u.completion_tokens, "tokens_per_s": rate})
        ctx.record_llm_call(u, completion.text)
        return completion
