"""What a run returns: a structured result for every ending — completed, expired or failed, never a traceback."""

from __future__ import annotations

import enum
from typing import Any

import msgspec

from aeon.domain.budget import TTLExpirationResponse
from aeon.domain.history import ExecutionHistory
from aeon.domain.records import LostRecords

LOG_LOST = "AEON.EVENTLOG.LOST"


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

    def with_lost_records(self, lost: LostRecords) -> RunResult:
        """This result when the run's event log lost records: an error whatever the run's own outcome, since the
        run can no longer be audited. The run's own error, if any, stays the error; the loss is always a warning."""
        noun = "record" if lost.count == 1 else "records"
        message = f"the event log lost {lost.count} {noun}: {lost.reason}"
        error = self.error or ErrorInfo(code=LOG_LOST, message=message, phase="", correlation_id=self.correlation_id)
        return msgspec.structs.replace(self, status=RunStatus.ERROR, error=error, warnings=[*self.warnings, message])
