"""ExecutionPass and ExecutionHistory: the inspectable record of a multi-pass run (04, 05 US5)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from aeon.domain.phases import PassPhase


def _instant(iso: str) -> datetime:
    """An ISO 8601 timestamp as an aware instant (naive ones are taken as UTC), so offsets compare correctly."""
    moment = datetime.fromisoformat(iso)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class TimingInformation(msgspec.Struct, kw_only=True):
    start_time: str
    end_time: str | None = None
    duration_seconds: float | None = None


class PhaseTiming(msgspec.Struct, kw_only=True):
    phase: str  # "A" | "B" | "C" | "D"
    start_time: str
    end_time: str
    duration_seconds: float
    outcome: str  # "success" | "failure"


class ExecutionPass(msgspec.Struct, kw_only=True):
    pass_number: int
    phase: PassPhase
    plan_state: dict[str, Any]
    ttl_remaining: int
    timing_information: TimingInformation
    execution_results: dict[str, Any] = msgspec.field(default_factory=dict)
    evaluation_results: dict[str, Any] = msgspec.field(default_factory=dict)
    refinement_changes: list[dict[str, Any]] = msgspec.field(default_factory=list)
    phases: list[PhaseTiming] = msgspec.field(default_factory=list)
    task_profile: dict[str, Any] | None = None
    adaptive_depth: dict[str, Any] | None = None
    llm_usage: dict[str, int] = msgspec.field(default_factory=dict)
    final_plan_state: dict[str, Any] | None = None

    def entry_problems(self) -> list[str]:
        """FR-031: required before a phase runs."""
        out = []
        if self.pass_number < 0:
            out.append("pass_number is negative")
        if not self.plan_state:
            out.append("plan_state is empty")
        if self.ttl_remaining < 0:
            out.append("ttl_remaining is negative")
        if not self.timing_information.start_time:
            out.append("timing_information.start_time is empty")
        return out

    def exit_problems(self) -> list[str]:
        """FR-032/033: required after phase C, and the merge invariants between execution and evaluation results."""
        out = []
        t = self.timing_information
        if t.end_time is None or t.duration_seconds is None:
            out.append("timing_information.end_time/duration_seconds missing")
        elif _instant(t.end_time) < _instant(t.start_time):
            out.append("timing_information.end_time is before start_time")
        for sid, res in self.execution_results.items():
            if not isinstance(res, dict) or "status" not in res:
                out.append(f"execution_results[{sid}] has no status")
        if self.evaluation_results:
            for key in ("validation_report", "convergence"):
                if key not in self.evaluation_results:
                    out.append(f"evaluation_results lacks {key}")
            overlap = set(self.evaluation_results) & set(self.execution_results)
            if overlap:
                out.append(f"execution and evaluation results conflict on {sorted(overlap)}")
        return out


class ExecutionHistory(msgspec.Struct, kw_only=True):
    execution_id: str
    task_input: str
    configuration: dict[str, Any]
    passes: list[ExecutionPass] = msgspec.field(default_factory=list)
    final_result: dict[str, Any] = msgspec.field(default_factory=dict)
    overall_statistics: dict[str, Any] = msgspec.field(default_factory=dict)
    profiles: list[dict[str, Any]] = msgspec.field(default_factory=list)
    advisories: list[dict[str, Any]] = msgspec.field(default_factory=list)
