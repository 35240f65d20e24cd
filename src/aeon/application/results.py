"""What a run returns, for every ending — completed, expired, failed or interrupted, never a traceback: the public
result types (`aeon.RunResult`, `aeon.RunStatus`). How each ending is assembled from a run is kernel/outcome.py."""

from __future__ import annotations

import enum
from typing import Any

import msgspec

from aeon.domain.advisories import Advisory
from aeon.domain.approval import ApprovalRequest
from aeon.domain.budget import BudgetState
from aeon.domain.evaluation import ConvergenceAssessment
from aeon.domain.expiry import TTLExpirationResponse
from aeon.domain.history import (
    ExecutionHistory,
    StepResult,
)
from aeon.domain.ledger import LedgerReport
from aeon.domain.plan import Plan
from aeon.domain.records import Counters, LostRecords

LOG_LOST = "AEON.EVENTLOG.LOST"


class RunStatus(enum.StrEnum):
    """How a run ended (a str: `result.status == "completed"` holds); `aeon run` exits with one code per status."""

    COMPLETED = "completed"
    TTL_EXPIRED = "ttl_expired"
    ERROR = "error"
    INTERRUPTED = "interrupted"  # SIGINT/SIGTERM: the steps done so far, a run_end record, no more work
    UNVERIFIED = "unverified"  # ran to its end, but a tool step's output is LLM fallback text: the tool never ran
    AWAITING_APPROVAL = "awaiting_approval"  # a durable run waits for a person (aeon approve / aeon deny)
    APPROVAL_EXPIRED = "approval_expired"  # no decision came within run.approval_timeout: the call never made
    FAILED = "failed"  # ran to its end, but no step succeeded, or the last step or the last tool step did not
    DENIED = "denied"  # did not get done because a person denied a tool call it needed (`error` says which, why)


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


class BudgetReport(msgspec.Struct, kw_only=True):
    ttl: int
    ttl_remaining: int
    max_llm_calls: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    max_tokens: int | None = None
    max_cost: float | None = None
    cost: float | None = None  # USD from the price table; None when a call's model has no price

    @classmethod
    def of(cls, b: BudgetState, *, cost: float | None) -> BudgetReport:
        return cls(
            ttl=b.limits.ttl,
            ttl_remaining=b.ttl_remaining,
            max_llm_calls=b.limits.max_llm_calls,
            llm_calls=b.llm_calls,
            prompt_tokens=b.prompt_tokens,
            completion_tokens=b.completion_tokens,
            cached_tokens=b.cached_tokens,
            max_tokens=b.limits.max_tokens,
            max_cost=b.limits.max_cost,
            cost=cost,
        )


class MissingToolCall(msgspec.Struct, kw_only=True):
    """A tool step that fell back to LLM text: the tool never ran, so the step's output is unverified."""

    step_id: str
    tool: str
    args: dict[str, Any]
    reason: str


class RunResult(msgspec.Struct, kw_only=True):
    """What a run returns, however it ended — what `aeon run --json` prints (and `history`, which --json leaves out
    and --history writes), secrets redacted. `outputs` holds each step's result by step id; `answer` is the final
    step's output; `budget` the TTL, calls, tokens and cost spent; `ledger` every LLM call; `error` and
    `ttl_expiration` say why a run that did not complete stopped."""

    status: RunStatus
    correlation_id: str
    request: str
    plan: Plan | None
    outputs: dict[str, StepResult]
    budget: BudgetReport
    counts: Counters
    warnings: list[str] = msgspec.field(default_factory=list)
    ttl_expiration: TTLExpirationResponse | None = None
    error: ErrorInfo | None = None
    converged: bool | None = None  # None when evaluation is off
    passes: int = 0
    answer: Any = None
    convergence: ConvergenceAssessment | None = None
    history: ExecutionHistory | None = None  # written by --history; the --json document leaves it out
    advisories: list[Advisory] = msgspec.field(default_factory=list)  # rejected refinements, manual work …
    tool_calls_not_made: list[MissingToolCall] = msgspec.field(default_factory=list)
    ledger: LedgerReport | None = None  # every LLM call; sums per phase, per pass and for the run
    pending_approval: ApprovalRequest | None = None  # the call a run awaiting approval waits on
    # where the answer came from when that is untrusted data (it may quote it); absent when the answer is trusted
    untrusted_sources: list[str] | msgspec.UnsetType = msgspec.UNSET

    def with_lost_records(self, lost: LostRecords) -> RunResult:
        """This result when the run's event log lost records: an error whatever the run's own outcome, since the
        run can no longer be audited. The run's own error, if any, stays the error; the loss is always a warning."""
        noun = "record" if lost.count == 1 else "records"
        message = f"the event log lost {lost.count} {noun}: {lost.reason}"
        error = self.error or ErrorInfo(code=LOG_LOST, message=message, phase="", correlation_id=self.correlation_id)
        return msgspec.structs.replace(self, status=RunStatus.ERROR, error=error, warnings=[*self.warnings, message])


class RunEnded(msgspec.Struct, tag=True, frozen=True, kw_only=True):
    """The run ended: its whole `result`, as aeon.run returns it. The last event of every aeon.stream; JSON as the
    progress events are (`{"type": "RunEnded", "result": {...}}`), redacted like them."""

    result: RunResult
