"""Records of a run: tool calls, supervisor actions, counters, and the records a log could not write."""

from __future__ import annotations

from typing import Any

import msgspec

from aeon.domain.provenance import Label


class ToolCall(msgspec.Struct, kw_only=True):
    step_id: str
    tool: str
    args: dict[str, Any]
    output: Any = None
    error: str | None = None
    notes: list[str] = msgspec.field(default_factory=list)  # parts of the output recorded as text (Conversion)
    supplied_by: str | None = None  # set when the output was given (by the operator) instead of running the tool
    # provenance, set only when untrusted (absent in trusted flows and in records written before it): the label of
    # what the tool returned (output or error), and the step's origin when it was written after reading untrusted data
    label: Label | msgspec.UnsetType = msgspec.UNSET
    origin: Label | msgspec.UnsetType = msgspec.UNSET


class SupervisorAction(msgspec.Struct, kw_only=True):
    """One thing the supervisor did: kind is deterministic_repair, llm_repair, tool_repair or unrecoverable."""

    kind: str
    target: str
    detail: str
    attempt: int = 0
    succeeded: bool = True


class Counters(msgspec.Struct, kw_only=True):
    llm_calls: int = 0
    deterministic_repairs: int = 0
    llm_repairs: int = 0
    tool_repairs: int = 0
    fallbacks: int = 0
    tool_errors: int = 0


class LostRecords(msgspec.Struct, frozen=True, kw_only=True):
    """Records an event log could not write: how many, and why the first one failed (naming where it went)."""

    count: int
    reason: str
