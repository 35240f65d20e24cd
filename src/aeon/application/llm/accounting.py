"""What one LLM call may cost before it is sent, and what it did cost after: the caps checked against the worst
case, the ledger entry, the span attributes and the token-usage metric."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from aeon.application import tracing as t
from aeon.application.errors import BudgetExhausted
from aeon.application.llm.calling import CallingRun
from aeon.application.ports import SpanPort
from aeon.domain.ledger import CallEntry, ModelPrice, estimate_prompt_tokens, price_of
from aeon.domain.llm import Completion, Message, Usage

# The worst case of a call whose max_tokens the caller left to the adapter: the base config's llm.max_tokens.
DEFAULT_MAX_TOKENS = 512
_OPENAI = ("openai-chat", "openai-reasoning")
_ANTHROPIC = ("anthropic", "anthropic-thinking", "anthropic-tool")


def provider_name(info: Mapping[str, str]) -> str:
    """gen_ai.provider.name: the well-known name for OpenAI's and Anthropic's own APIs, else the dialect spoken."""
    dialect = info.get("dialect", "")
    if dialect in _OPENAI:
        return "openai"
    if dialect in _ANTHROPIC:
        return "anthropic"
    return dialect or info.get("adapter", "unknown")


class CallAccounts:
    """Prices and checks the calls of one run through one model."""

    def __init__(
        self, run: CallingRun, info: Mapping[str, str], *, max_tokens: int | None, prices: Mapping[str, ModelPrice]
    ) -> None:
        self._run = run
        self.model = info.get("model") or None
        self.provider = provider_name(info)
        self._max_tokens = DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens
        self._prices = prices
        self._capped = run.meter.limits.max_tokens is not None or run.meter.limits.max_cost is not None

    def check(self, purpose: str, messages: Sequence[Message]) -> None:
        """Raise BudgetExhausted when the call's worst case could cross run.max_tokens or run.max_cost: not sent."""
        if not self._capped:
            return
        run = self._run
        prompt = estimate_prompt_tokens([m.content for m in messages])
        price = price_of(self._prices, self.model)
        worst_cost = price.cost(prompt, self._max_tokens) if price is not None else None
        hit = run.meter.would_cross(
            worst_tokens=prompt + self._max_tokens, worst_cost=worst_cost, spent_cost=run.state.usage.cost
        )
        if hit is not None:
            worst = {"prompt_tokens": prompt, "max_tokens": self._max_tokens, "cost": worst_cost}
            run.record.event("llm_call_not_sent", purpose=purpose, cap=hit.cap.value, worst_case=worst)
            raise BudgetExhausted.mid_phase(hit, f"before LLM call for {purpose}; the call was not sent")

    def entry(
        self, purpose: str, usage: Usage | None, seconds: float, *, model: str | None, error: str | None = None
    ) -> CallEntry:
        run, u = self._run, usage or Usage()
        model = model or self.model
        price = price_of(self._prices, model)
        return CallEntry(
            purpose=purpose,
            phase=run.phase.value,
            pass_number=run.state.pass_number,
            step_id=run.current_step,
            model=model,
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            cached_tokens=u.cached_tokens,
            seconds=round(seconds, 6),
            cost=price.cost(u.prompt_tokens, u.completion_tokens, u.cached_tokens) if price is not None else None,
            error=error,
        )

    # -- tracing --------------------------------------------------------------------------------------------------
    def span_name(self) -> str:
        return f"chat {self.model}" if self.model else "chat"

    def request_attributes(self, messages: Sequence[Message]) -> dict[str, Any]:
        attrs: dict[str, Any] = {
            t.OPERATION: "chat",
            t.PROVIDER: self.provider,
            t.REQUEST_MODEL: self.model,
            "gen_ai.request.max_tokens": self._max_tokens,
        }
        if self._run.tracer.capture_content:
            attrs["gen_ai.input.messages"] = msgspec.json.encode(messages).decode()
        return attrs

    def traced(self, span: SpanPort, completion: Completion) -> None:
        u, tracer = completion.usage, self._run.tracer
        attrs: dict[str, Any] = {
            t.RESPONSE_MODEL: completion.model,
            t.FINISH_REASONS: [completion.finish_reason] if completion.finish_reason else None,
            t.INPUT_TOKENS: u.prompt_tokens,
            t.OUTPUT_TOKENS: u.completion_tokens,
            t.CACHED_TOKENS: u.cached_tokens,
            "gen_ai.response.id": completion.request_id,
        }
        if tracer.capture_content:
            output = [{"role": "assistant", "content": completion.text}]
            attrs["gen_ai.output.messages"] = msgspec.json.encode(output).decode()
        span.set(attrs)
        metric = {t.OPERATION: "chat", t.PROVIDER: self.provider, t.REQUEST_MODEL: self.model}
        tracer.token_usage(u.prompt_tokens, {**metric, t.TOKEN_TYPE: "input"})
        tracer.token_usage(u.completion_tokens, {**metric, t.TOKEN_TYPE: "output"})
