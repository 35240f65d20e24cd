"""What a run returns: a structured result for every ending — completed, expired or failed, never a traceback."""

from __future__ import annotations

import enum
from typing import Any

import msgspec

from aeon.domain.budget import TTLExpirationResponse
from aeon.domain.history import ExecutionHistory


class RunStatus(enum.StrEnum):
    COMPLETED = "completed"
    TTL_EXPIRED = "ttl_expired"
    ERROR = "error"
    INTERRUPTED = "interrupted"  # SIGINT/SIGTERM: the steps done so far, a run_end record, no more work


class ErrorInfo(msgspec.Struct, kw_only=True):
    code: str
    message: str
    phase: str
    step_id: str | None = None
    correlation_id: str = ""
    severity: str | None = None
    affected_component: str | None = None
    failure_condition: str | None = None
    pass_number: int | None = None


class RunResult(msgspec.Struct, kw_only=True):
    status: RunStatus
    correlation_id: str
    request: str
    plan: dict[str, Any] | None
    outputs: dict[str, Any]
    budget: dict[str, Any]
    counts: dict[str, int]
    warnings: list[str] = msgspec.field(default_factory=list)
    ttl_expiration: TTLExpirationResponse | None = None
    error: ErrorInfo | None = None
    converged: bool | None = None  # None when evaluation is off
    passes: int = 0
    answer: Any = None
    convergence: dict[str, Any] | None = None
    history: ExecutionHistory | None = None
    advisories: list[dict[str, Any]] = msgspec.field(default_factory=list)  # rejected refinements, manual work …
    # tool steps that fell back to LLM text: the tool never ran, so their outputs are unverified
    tool_calls_not_made: list[dict[str, Any]] = msgspec.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The --json document; the full history goes to --history instead."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        out.pop("history", None)
        return out
