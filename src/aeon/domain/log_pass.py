"""Audit-log records of a pass: phase boundaries and failures, cycles, tool calls, repairs, refinement, advisories."""

from __future__ import annotations

from typing import Any

import msgspec

from aeon.domain.log_records import LogRecord
from aeon.domain.provenance import Label
from aeon.domain.records import SupervisorAction, ToolCall


class PhaseEntryRecord(LogRecord, tag="phase_entry", kw_only=True):
    phase: str
    pass_number: int
    transition: str
    state_before: dict[str, Any]
    ttl_snapshot: dict[str, int]


class PhaseExitRecord(LogRecord, tag="phase_exit", kw_only=True):
    phase: str
    pass_number: int
    transition: str
    duration: float
    outcome: str
    state_before: dict[str, Any]
    state_after: dict[str, Any]
    ttl_snapshot: dict[str, int]


class PhaseErrorRecord(LogRecord, tag="phase_error", kw_only=True):
    """A structured phase failure (aeon.domain.phases.PhaseTransitionError)."""

    error_code: str
    severity: str
    affected_component: str
    failure_condition: str
    detail: str
    retryable: bool
    run_id: str | None = msgspec.field(default=None, name="_correlation_id")  # the failing run, as the error said
    phase: str
    pass_number: int
    transition: str


class PhaseRetryRecord(PhaseErrorRecord, tag="phase_retry", kw_only=True):
    """A retryable phase failure, retried once by the phase runner (same fields as phase_error). An unavailable
    provider waited out between two rounds is an llm_retry_round record (before version 1 it was also phase_retry:
    such a line reads as LLMRetryRoundRecord)."""


class CycleRecord(LogRecord, tag="cycle", kw_only=True):
    """One orchestration cycle: the plan as it stood, its LLM outputs, repairs, tool calls and errors."""

    pass_number: int
    step_number: int
    plan_state: Any
    llm_output: list[str]
    supervisor_actions: list[SupervisorAction]
    tool_calls: list[ToolCall]
    ttl_remaining: int
    errors: list[str]
    phase: str = "EXECUTE"
    step_id: str | None = None


class SupervisorActionRecord(LogRecord, tag="supervisor_action", kw_only=True):
    """A SupervisorAction: kind is deterministic_repair, llm_repair, tool_repair or unrecoverable."""

    kind: str
    target: str
    detail: str
    attempt: int = 0
    succeeded: bool = True


class ToolCallRecord(LogRecord, tag="tool_call", kw_only=True):
    step_id: str
    tool: str
    args: dict[str, Any]
    output: Any = None
    error: str | None = None
    notes: list[str] = msgspec.field(default_factory=list)
    supplied_by: str | None = None
    label: Label | msgspec.UnsetType = msgspec.UNSET  # what the tool returned, when untrusted (absent otherwise)
    origin: Label | msgspec.UnsetType = msgspec.UNSET  # the step's, when it was written after reading untrusted data


class FallbackRecord(LogRecord, tag="fallback", kw_only=True):
    step_id: str
    reason: str


class MemoryErrorRecord(LogRecord, tag="memory_error", kw_only=True):
    step_id: str
    message: str


class RefinementRecord(LogRecord, tag="refinement", kw_only=True):
    """What happened to one refinement action (aeon.domain.refinement.ActionOutcome)."""

    action: dict[str, Any]
    applied: bool
    reason: str = ""
    advisory: bool = False
    contradicts: list[str] = msgspec.field(default_factory=list)
    manual_intervention: bool = False


class RefinementSkippedRecord(LogRecord, tag="refinement_skipped", kw_only=True):
    reason: str
    cap: str


class RefinementFailedRecord(LogRecord, tag="refinement_failed", kw_only=True):
    detail: str


class AdvisoryRecord(LogRecord, tag="advisory", kw_only=True, omit_defaults=True):
    """An advisory (aeon.domain.advisories): `kind` names which; the fields of that kind, the others left out."""

    kind: str
    pass_number: int
    step_id: str | None = None
    question: str | None = None
    reason: str | None = None
    max_depth: int | None = None
    detail: str | None = None
    validator_repair: dict[str, Any] | None = None
    issue_id: str | None = None
    planner_action: str | None = None
    resolution: str | None = None
