"""Audit-log records of a run's life: start, resume, fork, end, batches, warnings, depth, approvals, expiry."""

from __future__ import annotations

from typing import Any

import msgspec

from aeon.domain.log_records import LogRecord


class RunStartRecord(LogRecord, tag="run_start", kw_only=True):
    request: str
    ttl: int
    max_llm_calls: int | None
    max_seconds: float | None
    evaluate: bool
    tools: list[str]
    plan_given: bool
    llm: dict[str, Any]


class RunResumedRecord(RunStartRecord, tag="run_resumed", kw_only=True):
    from_stage: str
    pass_number: int


class RunEndRecord(LogRecord, tag="run_end", kw_only=True):
    status: str
    converged: bool | None
    passes: int
    error: dict[str, Any] | None
    llm_calls: int
    counts: dict[str, int]
    expired_cap: str | None
    ledger: dict[str, Any] | None


class RunForkedRecord(LogRecord, tag="run_forked", kw_only=True):
    source: str
    from_pass: int
    request: str


class BatchStartRecord(LogRecord, tag="batch_start", kw_only=True):
    batch: str
    runs: int


class ServeStartRecord(LogRecord, tag="serve_start", kw_only=True):
    """`aeon serve` started: its name (the executor that runs its runs) and where it listens."""

    server: str
    address: str


class WarningRecord(LogRecord, tag="warning", kw_only=True):
    message: str


class TtlAllocatedRecord(LogRecord, tag="ttl_allocated", kw_only=True):
    """Phase A's adaptive-depth configuration (AdaptiveDepthConfiguration) and the profile it came from."""

    profile_version: int
    profile_source: str
    detected_complexity: str
    allocated_ttl: int
    reasoning_mode: str
    adjustment_reason: str
    heuristics_used: list[str] = msgspec.field(default_factory=list)
    ambiguity_score: float | None = None
    uncertainty_score: float | None = None


class DepthDecisionRecord(LogRecord, tag="depth_decision", kw_only=True):
    """Phase D's decision and the adaptive-depth configuration it left for the next pass."""

    decision: str
    detected_complexity: str
    allocated_ttl: int
    reasoning_mode: str
    adjustment_reason: str
    heuristics_used: list[str] = msgspec.field(default_factory=list)
    ambiguity_score: float | None = None
    uncertainty_score: float | None = None


class ProfileClampedRecord(LogRecord, tag="profile_clamped", kw_only=True):
    note: str
    profile_version: int


class ApprovalRequestedRecord(LogRecord, tag="approval_requested", kw_only=True, omit_defaults=True):
    key: str
    step_id: str
    tool: str
    args: dict[str, Any]
    pass_number: int
    reason: str | None = None  # why the capability policy asks (absent: the tool or step asks for every call)
    provenance: list[str] = msgspec.field(default_factory=list)  # the outputs the step or its arguments came from


class ApprovalDecidedRecord(LogRecord, tag="approval_decided", kw_only=True):
    key: str
    step_id: str
    tool: str
    verdict: str
    by: str
    reason: str | None
    edited: bool
    args_before: dict[str, Any] | None = None
    args: dict[str, Any] | None = None


class TtlExpiredRecord(LogRecord, tag="ttl_expired", kw_only=True):
    """The run's expiry response (aeon.domain.expiry.TTLExpirationResponse), field for field."""

    expiration_type: str
    phase: str
    pass_number: int
    plan_state: Any
    execution_results: dict[str, Any]
    message: str
    ttl_remaining: int = 0
    latest_pass_result: Any = None
    partial_result: Any = None
    ttl_expired_metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    converged: bool = False
    cap: str = "ttl"
    result_type: str = "ttl_expired"
    termination_reason: str = "ttl_expired"
