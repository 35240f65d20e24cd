"""Run budgets: TTL in passes of the loop, resource caps spent inside a pass, and the meter owning their arithmetic."""

from __future__ import annotations

import enum

import msgspec

from aeon.domain.llm import Usage


class ExpirationType(enum.StrEnum):
    PHASE_BOUNDARY = "phase_boundary"
    MID_PHASE = "mid_phase"


class Cap(enum.StrEnum):
    """What can run out: passes of the loop, or a resource cap."""

    TTL = "ttl"
    MAX_LLM_CALLS = "max_llm_calls"
    MAX_TOKENS = "max_tokens"
    MAX_SECONDS = "max_seconds"
    MAX_COST = "max_cost"


class BudgetLimits(msgspec.Struct, frozen=True, kw_only=True):
    ttl: int
    max_llm_calls: int
    max_tokens: int | None = None
    max_seconds: float | None = None
    max_cost: float | None = None  # USD, priced from the config's price table


class CapHit(msgspec.Struct, frozen=True, kw_only=True):
    """A cap that ran out, as a value: the application turns it into its control-flow error."""

    cap: Cap
    text: str  # "max_llm_calls (30)"


class BudgetState(msgspec.Struct, kw_only=True):
    """What is spent and what is left; part of the run-state record. Changed only through BudgetMeter."""

    limits: BudgetLimits
    ttl_remaining: int
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    elapsed_seconds: float = 0.0

    @classmethod
    def start(cls, limits: BudgetLimits) -> BudgetState:
        return cls(limits=limits, ttl_remaining=limits.ttl)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class BudgetMeter:
    """All TTL, call, token and time arithmetic of one run. Pure: the caller passes the monotonic time in.

    Elapsed time continues from the state it was given, so a run rebuilt from its record keeps its clock.
    """

    def __init__(self, state: BudgetState, *, now: float) -> None:
        self.state = state
        self._base = state.elapsed_seconds
        self._t0 = now

    @property
    def limits(self) -> BudgetLimits:
        return self.state.limits

    def tick(self, now: float) -> float:
        self.state.elapsed_seconds = self._base + max(now - self._t0, 0.0)
        return self.state.elapsed_seconds

    def remaining_seconds(self, now: float) -> float | None:
        """Seconds left under max_seconds (never negative), or None without that cap."""
        limit = self.limits.max_seconds
        return None if limit is None else max(limit - self.tick(now), 0.0)

    def exhausted(self, now: float, *, needs_llm: bool = True) -> CapHit | None:
        """The cap this work would need and is spent, before it starts. Work that needs no LLM call (a registered
        tool with valid arguments) may still run when only the call cap is spent; token and time caps stop all."""
        s, lim = self.state, self.limits
        elapsed = self.tick(now)
        if needs_llm and s.llm_calls >= lim.max_llm_calls:
            return CapHit(cap=Cap.MAX_LLM_CALLS, text=f"max_llm_calls ({lim.max_llm_calls})")
        if lim.max_tokens is not None and s.tokens >= lim.max_tokens:
            return CapHit(cap=Cap.MAX_TOKENS, text=f"max_tokens ({lim.max_tokens})")
        if lim.max_seconds is not None and elapsed >= lim.max_seconds:
            return CapHit(cap=Cap.MAX_SECONDS, text=f"max_seconds ({lim.max_seconds:g})")
        return None

    def would_cross(self, *, worst_tokens: int, worst_cost: float | None, spent_cost: float | None) -> CapHit | None:
        """Before a call: the token or cost cap its worst case (estimated prompt + its max_tokens) could cross.

        A cost cap cannot be kept for a model whose price is unknown (`worst_cost` or `spent_cost` None): that call
        is not sent either."""
        s, lim = self.state, self.limits
        if lim.max_tokens is not None and s.tokens + worst_tokens > lim.max_tokens:
            text = f"max_tokens ({lim.max_tokens}): {s.tokens} spent, this call could take {worst_tokens} more"
            return CapHit(cap=Cap.MAX_TOKENS, text=text)
        if lim.max_cost is None:
            return None
        if worst_cost is None or spent_cost is None:
            text = (
                f"max_cost (${lim.max_cost:g}): the model's price is not in the price table, so no call can be priced"
            )
            return CapHit(cap=Cap.MAX_COST, text=text)
        if spent_cost + worst_cost > lim.max_cost:
            text = f"max_cost (${lim.max_cost:g}): ${spent_cost:.6f} spent, this call could cost ${worst_cost:.6f} more"
            return CapHit(cap=Cap.MAX_COST, text=text)
        return None

    def time_cap(self) -> CapHit:
        return CapHit(cap=Cap.MAX_SECONDS, text=f"max_seconds ({self.limits.max_seconds:g})")

    def spend(self, usage: Usage | None, now: float) -> CapHit | None:
        """Count one call (failed ones too) and its tokens; the token or time cap it overspent, if any."""
        s, lim = self.state, self.limits
        s.llm_calls += 1
        if usage is not None:
            s.prompt_tokens += usage.prompt_tokens
            s.completion_tokens += usage.completion_tokens
            s.cached_tokens += usage.cached_tokens
        elapsed = self.tick(now)
        if lim.max_tokens is not None and s.tokens > lim.max_tokens:
            return CapHit(cap=Cap.MAX_TOKENS, text=f"max_tokens ({lim.max_tokens})")
        if lim.max_seconds is not None and elapsed > lim.max_seconds:
            return CapHit(cap=Cap.MAX_SECONDS, text=f"max_seconds ({lim.max_seconds:g})")
        return None

    def allocate(self, allocated_ttl: int, pass_number: int) -> None:
        """TTL allocated for the whole run (by adaptive depth); the cycle now running always completes."""
        self.state.ttl_remaining = max(1, allocated_ttl - (pass_number - 1))

    def end_cycle(self, ttl_delta: int) -> None:
        """Exactly one decrement per completed cycle, plus what phase D added (an escalation)."""
        self.state.ttl_remaining += ttl_delta - 1

    @property
    def ttl_spent(self) -> bool:
        return self.state.ttl_remaining <= 0
