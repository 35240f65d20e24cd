"""The one door to the LLM: budget checks before and after every call, usage accounting and call logging."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from aeon.application.errors import BudgetExhausted, LLMError, LLMTooSlow, LLMTruncated, LLMUnavailable
from aeon.application.llm.accounting import CallAccounts
from aeon.application.llm.calling import CallingRun
from aeon.application.llm.prefix_cache import uncached
from aeon.application.llm.retry_budget import GATEWAY_ROUNDS
from aeon.application.ports import LLMPort
from aeon.domain.budget import CapHit
from aeon.domain.ledger import CallEntry, ModelPrice
from aeon.domain.llm import Completion, Message, Usage
from aeon.domain.log_llm import LLMErrorRecord, LLMRetryRoundRecord
from aeon.domain.progress import LLMCallEnded, LLMCallStarted, LLMRetryRound

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

    def __init__(
        self,
        llm: LLMPort,
        run: CallingRun,
        *,
        max_tokens: int | None = None,
        preamble: str = "",
        prices: Mapping[str, ModelPrice] | None = None,
    ) -> None:
        self._llm = llm
        self._run = run
        self._max_tokens = max_tokens
        self._hit: CapHit | None = None
        info = llm.describe()
        self._accounts = CallAccounts(run, info, max_tokens=max_tokens, prices=prices or {})
        # One identical first message on every call (house rules + tool catalogue): providers that cache prompt
        # prefixes (llama.cpp's KV cache, OpenAI and Anthropic prompt caching) reuse it across all prompt kinds.
        self._preamble = [Message(role="system", content=run.redactor.text(preamble))] if preamble else []
        # said once, before the first call: a prefix under the provider's cache minimum is never served from its cache
        self._uncached = uncached(self._preamble[0].content if preamble else "", info)

    async def _call(
        self,
        purpose: str,
        sent: Sequence[Message],
        schema: Mapping[str, Any] | None,
        schema_name: str,
        stop: Sequence[str],
        t0: float,
    ) -> Completion:
        """One call through the port, ended by run.max_seconds wherever its time goes (answer, retries, waits)."""
        run = self._run
        try:
            async with asyncio.timeout(run.remaining_seconds()):
                return await self._llm.complete(
                    sent, schema=schema, schema_name=schema_name, max_tokens=self._max_tokens, stop=stop
                )
        except TimeoutError:
            self._ended(self._spend(purpose, None, t0, error="timeout"))
            raise run.out_of_time(f"during the LLM call for {purpose}") from None

    async def _pause(self, purpose: str, exc: LLMUnavailable) -> float:
        run = self._run
        wait = min(exc.retry_after, MAX_PHASE_RETRY_WAIT) if exc.retry_after else PHASE_RETRY_WAIT
        run.record.log(LLMRetryRoundRecord(purpose=purpose, reason=exc.code, phase=run.stage.value, wait_seconds=wait))
        run.record.notify(LLMRetryRound(purpose=purpose, attempts=exc.attempts, cause=exc.cause, wait_seconds=wait))
        try:
            async with asyncio.timeout(run.remaining_seconds()):
                await run.clock.sleep(wait)
        except TimeoutError:
            raise run.out_of_time(f"while waiting to call the provider again for {purpose}") from None
        return wait

    def _spend(
        self, purpose: str, usage: Usage | None, t0: float, *, model: str | None = None, error: str | None = None
    ) -> CallEntry:
        """Count a call, failed or not, in the ledger and against the caps (a cap it overspent ends the phase once
        its record is written: `_overspent`)."""
        run = self._run
        now = run.clock.monotonic()
        entry = self._accounts.entry(purpose, usage, max(now - t0, 0.0), model=model, error=error)
        self._hit = run.meter.spend(usage, now)
        run.state.llm_called(entry)
        return entry

    def _overspent(self) -> None:
        if self._hit is not None:
            raise BudgetExhausted.mid_phase(self._hit, "exceeded after an LLM call")

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
        if self._uncached is not None:
            record, event = self._uncached
            self._uncached = None
            run.record.log(record)
            run.record.notify(event)
        sent = [*self._preamble, *self._redacted(messages)]
        first: LLMUnavailable | None = None
        pause = 0.0
        for attempt in range(1, GATEWAY_ROUNDS + 1):
            try:
                return await self._attempt(purpose, sent, schema, schema_name, stop, attempt)
            except LLMTooSlow as exc:  # another round would be as slow: say so, with the run's pace
                raise self._too_slow(exc) from exc
            except LLMUnavailable as exc:
                if attempt == GATEWAY_ROUNDS:
                    raise _both_rounds(first or exc, exc, pause) from exc
                # The phase contract classifies an unavailable provider as retryable: one more round,
                # after a pause, so that a rate-limited provider is not hit again at once.
                first = first or exc
                pause = await self._pause(purpose, exc)
        raise AssertionError("unreachable")

    def _too_slow(self, exc: LLMTooSlow) -> LLMTooSlow:
        """The slow answer's error, saying how slow this run's answers were and what to change."""
        pace = self._run.state.usage.pace()
        return LLMTooSlow(
            f"{exc}; this run's {pace}: raise llm.read_timeout (the seconds one attempt may take) or use a faster "
            "model or machine",
            status=exc.status,
            attempts=exc.attempts,
            cause=exc.cause,
            waits=exc.waits,
            retry_after=exc.retry_after,
        )

    def _redacted(self, messages: Sequence[Message]) -> list[Message]:
        """What the prompts hold (step results, tool outputs, errors, earlier answers) with every secret blanked:
        the provider is an exit too."""
        text = self._run.redactor.text
        return [m if (t := text(m.content)) == m.content else Message(role=m.role, content=t) for m in messages]

    async def _attempt(
        self,
        purpose: str,
        sent: Sequence[Message],
        schema: Mapping[str, Any] | None,
        schema_name: str,
        stop: Sequence[str],
        attempt: int,
    ) -> Completion:
        """One request: caps checked against its worst case first (not sent when it could cross one), then sent,
        logged, traced and counted."""
        run, accounts = self._run, self._accounts
        run.check_caps(f"before LLM call for {purpose}")
        accounts.check(purpose, sent)
        run.record.notify(LLMCallStarted(purpose=purpose, phase=run.label, step_id=run.current_step))
        with run.tracer.span(accounts.span_name(), accounts.request_attributes(sent)) as span:
            t0 = run.clock.monotonic()
            try:
                completion = await self._call(purpose, sent, schema, schema_name, stop, t0)
            except LLMError as exc:
                span.fail(exc.code)
                # a failed request was still sent; a cut-off answer's tokens count too
                usage = exc.usage if isinstance(exc, LLMTruncated) else None
                entry = self._spend(purpose, usage, t0, error=exc.code)
                info = LLMErrorRecord(
                    purpose=purpose, error_code=exc.code, message=str(exc), status=exc.status, attempt=attempt
                )
                run.record.log(info)
                self._ended(entry)
                raise
            accounts.traced(span, completion)
        entry = self._spend(purpose, completion.usage, t0, model=completion.model)
        run.record.llm_call(completion, entry, run.label)
        for warning in completion.warnings:  # a parameter the provider refused, dropped for the rest of the run
            run.record.warn(warning)
        self._ended(entry, completion)
        self._overspent()
        return completion

    def _ended(self, entry: CallEntry, completion: Completion | None = None) -> None:
        """The call's end as its `llm_call` (or `llm_error`) record tells it, for whoever watches the run live."""
        tokens, seconds = entry.completion_tokens, entry.seconds
        rate = tokens / seconds if completion is not None and seconds >= 0.001 else None  # instant calls: no rate
        self._run.record.notify(
            LLMCallEnded(
                purpose=entry.purpose,
                completion_tokens=tokens,
                tokens_per_s=rate,
                prompt_tokens=entry.prompt_tokens,
                cached_tokens=entry.cached_tokens,
                cost=entry.cost,
                seconds=seconds,
                model=entry.model,
                step_id=entry.step_id,
                output=completion.text if completion is not None else None,
                finish_reason=completion.finish_reason if completion is not None else None,
                error=entry.error,
            )
        )
