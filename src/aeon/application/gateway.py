"""The one door to the LLM: budget checks before and after every call, usage accounting and call logging."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aeon.application.context import RunContext
from aeon.application.errors import LLMError, LLMTruncated, LLMUnavailable
from aeon.application.ports import LLMPort
from aeon.domain.llm import Completion, Message


class LLMGateway:
    """Wraps an LLMPort for one run. Every call is counted against the budget and written to the event log."""

    def __init__(self, llm: LLMPort, ctx: RunContext, *, max_tokens: int | None = None, preamble: str = "") -> None:
        self._llm = llm
        self._ctx = ctx
        self._max_tokens = max_tokens
        # One identical first message on every call (house rules + tool catalogue): providers that cache prompt
        # prefixes (llama.cpp's KV cache, OpenAI and Anthropic prompt caching) reuse it across all prompt kinds.
        self._preamble = [Message(role="system", content=preamble)] if preamble else []

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
        for attempt in (1, 2):
            ctx.check_caps(f"before LLM call for {purpose}")
            ctx.notify("llm_start", {"purpose": purpose, "phase": ctx.phase, "step": ctx.state.current_step})
            t0 = ctx.clock.monotonic()
            try:
                completion = await self._llm.complete(
                    [*self._preamble, *messages],
                    schema=schema,
                    schema_name=schema_name,
                    max_tokens=self._max_tokens,
                    stop=stop,
                )
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
                # The phase contract classifies an unavailable provider as retryable: one more try (05 FR-011).
                if attempt == 1 and isinstance(exc, LLMUnavailable):
                    ctx.logger.emit("phase_retry", purpose=purpose, reason=exc.code, phase=ctx.context_key)
                    continue
                raise
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
