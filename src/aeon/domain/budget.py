"""Run budgets: TTL in passes of the loop and resource caps spent inside a pass, and the expiry response."""

from __future__ import annotations

import enum
from typing import Any

import msgspec


class ExpirationType(enum.StrEnum):
    PHASE_BOUNDARY = "phase_boundary"
    MID_PHASE = "mid_phase"


class BudgetLimits(msgspec.Struct, frozen=True, kw_only=True):
    ttl: int
    max_llm_calls: int
    max_tokens: int | None = None
    max_seconds: float | None = None


class BudgetState(msgspec.Struct, kw_only=True):
    """What is left. Mutated only by the application's budget meter."""

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


class TTLExpirationResponse(msgspec.Struct, kw_only=True):
    """The one structured answer for a run cut short by TTL or a resource cap (01 US6, 05 FR-027)."""

    expiration_type: ExpirationType
    phase: str
    pass_number: int
    plan_state: dict[str, Any] | None
    execution_results: dict[str, Any]
    message: str
    ttl_remaining: int = 0
    latest_pass_result: dict[str, Any] | None = None  # the most recent completed pass (02 FR-062)
    partial_result: dict[str, Any] | None = None  # the cut pass, when no pass completed
    ttl_expired_metadata: dict[str, Any] = msgspec.field(default_factory=dict)  # 02's quality metrics
    converged: bool = False
    cap: str = "ttl"  # which ran out: ttl (passes), max_llm_calls, max_tokens or max_seconds
    result_type: str = "ttl_expired"
    termination_reason: str = "ttl_expired"
