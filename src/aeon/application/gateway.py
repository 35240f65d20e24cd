"""The one door to the LLM: budget checks before and after every call, usage accounting and call logging."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from aeon.application.errors import BudgetExhausted, LLMError, LLMTruncated, LLMUnavailable
from aeon.application.ports import LLMPort
from aeon.application.run import Run
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
    """Wraps an LLMPort for one run: every call is context-checked, counted against the budget, bounded by the run's
    remaining time and written to the event log; an unavailable provider gets one more round after a pause."""

    def __init__(self, llm: LLMPort, run: Run, *, max_tokens: int | None = None, preamble: str = "") -> None:
        self._llm = llm
        self._run = run
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
        run = self._run
        try:
            async with asyncio.timeout(run.remaining_seconds()):
                return await self._llm.complete(
                    [*self._preamble, *messages],
                    schema=schema,
                    schema_name=schema_name,
                    max_tokens=self._max_tokens,
                    stop=stop,
                )
        except TimeoutError:
            self._spend(None)
            raise run.out_of_time(f"during the LLM call for {purpose}") from None

    async def _pause(self, purpose: str, exc: LLMUnavailable) -> float:
        run = self._run
        wait = min(exc.retry_after, MAX_PHASE_RETRY_WAIT) if exc.retry_after else PHASE_RETRY_WAIT
        run.record.event("phase_retry", purpose=purpose, reason=exc.code, phase=run.stage.value, wait_seconds=wait)
        info = {"purpose": purpose, "attempts": exc.attempts, "cause": exc.cause, "wait": wait}
        run.record.notify("llm_retry_round", info)
        try:
            async with asyncio.timeout(run.remaining_seconds()):
                await run.clock.sleep(wait)
        except TimeoutError:
            raise run.out_of_time(f"while waiting to call the provider again for {purpose}") from None
        return wait

    def _spend(self, completion: Completion | None, failure: LLMError | None = None) -> None:
        """Count a call, failed or not, against the caps; a finished call that overspent a cap ends the phase."""
        run = self._run
        usage = completion.usage if completion else (failure.usage if isinstance(failure, LLMTruncated) else None)
        hit = run.meter.spend(usage, run.clock.monotonic())
        run.state.counters.llm_calls = run.state.budget.llm_calls
        if completion is not None and hit is not None:
            raise BudgetExhausted.mid_phase(hit, "exceeded after an LLM call")

    async def complete(
        self,
        purpose: str,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
        stop: Sequence[str] = (),
    ) -> Completion:
        run = self._run
        run.guard.check()
        first: LLMUnavailable | None = None
        pause = 0.0
        for attempt in (1, 2):
            run.check_caps(f"before LLM call for {purpose}")
            run.record.notify("llm_start", {"purpose": purpose, "phase": run.label.value, "step": run.current_step})
            t0 = run.clock.monotonic()
            try:
                completion = await self._call(purpose, messages, schema, schema_name, stop)
                break
            except LLMError as exc:
                self._spend(None, exc)  # a failed request was still sent; a cut-off answer's tokens count too
                info = {"error_code": exc.code, "message": str(exc), "status": exc.status, "attempt": attempt}
                run.record.event("llm_error", purpose=purpose, **info)
                if not isinstance(exc, LLMUnavailable):
                    raise
                if first is not None:
                    raise _both_rounds(first, exc, pause) from exc
                # The phase contract classifies an unavailable provider as retryable: one more round,
                # after a pause, so that a rate-limited provider is not hit again at once.
                first = exc
                pause = await self._pause(purpose, exc)
        seconds = max(run.clock.monotonic() - t0, 0.0)
        run.record.llm_call(purpose, run.label, run.current_step, completion, seconds)
        for warning in completion.warnings:  # a parameter the provider refused, dropped for the rest of the run
            run.record.warn(warning)
        tokens = completion.usage.completion_tokens
        rate = tokens / seconds if seconds >= 0.001 else None  # instant (scripted) calls have no rate
        run.record.notify("llm_end", {"purpose": purpose, "completion_tokens": tokens, "tokens_per_s": rate})
        self._spend(completion)
        return completion
