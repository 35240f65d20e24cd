"""ExecutionPass and ExecutionHistory: the inspectable record of a multi-pass run (04, 05 US5), typed throughout."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from aeon.domain.advisories import Advisory
from aeon.domain.approval import ApprovalRecord
from aeon.domain.evaluation import ConvergenceAssessment, ConvergenceCriteria, SemanticValidationReport
from aeon.domain.ledger import LedgerReport
from aeon.domain.phases import PassPhase
from aeon.domain.plan import ClarityState, ExecutionMode, Plan, StepStatus
from aeon.domain.profile import AdaptiveDepthConfiguration, TaskProfile
from aeon.domain.refinement import ActionOutcome


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
    outcome: str  # "success" | "failure" | "expired" | "interrupted"


class StepResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One step's outcome as the results of a pass show it."""

    status: StepStatus
    output: Any
    mode: ExecutionMode | None
    errors: list[str]
    notes: list[str] = msgspec.field(default_factory=list)
    clarity_state: ClarityState | None = None


def step_results(plan: Plan | None) -> dict[str, StepResult]:
    return {
        s.step_id: StepResult(
            status=s.status,
            output=s.step_output,
            mode=s.mode,
            errors=list(s.errors),
            notes=list(s.notes),
            clarity_state=s.clarity_state,
        )
        for s in (plan.steps if plan else [])
    }


class Evaluation(msgspec.Struct, kw_only=True):
    """Phase C2's result: the advisory validation report and the convergence assessment built on it."""

    validation_report: SemanticValidationReport
    convergence: ConvergenceAssessment


class DepthRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The adaptive-depth configuration a pass ran under and, once phase D decided, what it decided and why."""

    detected_complexity: str
    allocated_ttl: int
    reasoning_mode: str
    adjustment_reason: str
    heuristics_used: list[str] = msgspec.field(default_factory=list)
    ambiguity_score: float | None = None
    uncertainty_score: float | None = None
    decision: str | None = None
    decision_reason: str | None = None
    next_phase: str | None = None
    profile_revision_reasons: list[str] | None = None

    @classmethod
    def of(cls, depth: AdaptiveDepthConfiguration) -> DepthRecord:
        return msgspec.convert(msgspec.to_builtins(depth), cls)


class PassUsage(msgspec.Struct, kw_only=True):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ExecutionPass(msgspec.Struct, kw_only=True):
    pass_number: int
    phase: PassPhase
    plan_state: Plan
    ttl_remaining: int
    timing_information: TimingInformation
    execution_results: dict[str, StepResult] = msgspec.field(default_factory=dict)
    evaluation_results: Evaluation | None = None
    refinement_changes: list[ActionOutcome] = msgspec.field(default_factory=list)
    phases: list[PhaseTiming] = msgspec.field(default_factory=list)
    task_profile: TaskProfile | None = None
    adaptive_depth: DepthRecord | None = None
    llm_usage: PassUsage = msgspec.field(default_factory=PassUsage)
    final_plan_state: Plan | None = None

    def entry_problems(self) -> list[str]:
        """What is missing or invalid among the fields required before a phase runs."""
        out = []
        if self.pass_number < 0:
            out.append("pass_number is negative")
        if not self.plan_state.steps:
            out.append("plan_state is empty")
        if self.ttl_remaining < 0:
            out.append("ttl_remaining is negative")
        if not self.timing_information.start_time:
            out.append("timing_information.start_time is empty")
        return out

    def exit_problems(self) -> list[str]:
        """What breaks the fields required after phase C, or the merge of execution and evaluation results."""
        out = []
        t = self.timing_information
        if t.end_time is None or t.duration_seconds is None:
            out.append("timing_information.end_time/duration_seconds missing")
        elif _instant(t.end_time) < _instant(t.start_time):
            out.append("timing_information.end_time is before start_time")
        if self.plan_state.steps and not self.execution_results:
            out.append("execution_results missing")
        if self.evaluation_results is not None:
            ids = {s.step_id for s in self.plan_state.steps} | set(self.execution_results)
            unknown = {
                i.location.get("step_id") for i in self.evaluation_results.validation_report.issues if i.location
            }
            if stray := sorted(str(s) for s in unknown - ids - {None}):
                out.append(f"evaluation issues name steps the pass does not have: {stray}")
        return out


class PassSummary(msgspec.Struct, kw_only=True):
    """A pass as a TTL-expiration response quotes it."""

    pass_number: int
    execution_results: dict[str, StepResult]
    evaluation_results: Evaluation | None
    plan_state: Plan

    @classmethod
    def of(cls, xp: ExecutionPass) -> PassSummary:
        return cls(
            pass_number=xp.pass_number,
            execution_results=xp.execution_results,
            evaluation_results=xp.evaluation_results,
            plan_state=xp.final_plan_state or xp.plan_state,
        )


class RunConfiguration(msgspec.Struct, kw_only=True):
    ttl: int
    max_llm_calls: int
    evaluate: bool
    convergence_criteria: ConvergenceCriteria
    adaptive_depth_settings: dict[str, int]


class FinalResult(msgspec.Struct, kw_only=True):
    converged: bool = False
    result_type: str = ""
    output: str | None = None
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)


class OverallStatistics(msgspec.Struct, kw_only=True):
    total_passes: int = 0
    convergence_achieved: bool = False
    total_refinements: int = 0
    total_time_seconds: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None  # USD; None when some call's model has no price


class ExecutionHistory(msgspec.Struct, kw_only=True):
    execution_id: str
    task_input: str
    configuration: RunConfiguration
    passes: list[ExecutionPass] = msgspec.field(default_factory=list)
    final_result: FinalResult = msgspec.field(default_factory=FinalResult)
    overall_statistics: OverallStatistics = msgspec.field(default_factory=OverallStatistics)
    profiles: list[TaskProfile] = msgspec.field(default_factory=list)
    advisories: list[Advisory] = msgspec.field(default_factory=list)
    ledger: LedgerReport | None = None  # every LLM call with tokens, latency and cost; per phase, pass and run
    approvals: list[ApprovalRecord] = msgspec.field(default_factory=list)  # every decision on a tool call, in order
