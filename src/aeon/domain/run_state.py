"""The run state: one serializable record of everything a run has done and decided, checkpointed at every phase
boundary, from which the run can be rebuilt and continued (what durable runs store)."""

from __future__ import annotations

from typing import Any

import msgspec

from aeon.domain.advisories import Advisory
from aeon.domain.approval import ApprovalRecord
from aeon.domain.budget import BudgetState
from aeon.domain.evaluation import ConvergenceAssessment, SemanticValidationReport
from aeon.domain.history import ExecutionPass, PassUsage, PhaseTiming
from aeon.domain.ledger import CallEntry, Ledger
from aeon.domain.phases import Stage
from aeon.domain.plan import Plan, PlanStep
from aeon.domain.profile import AdaptiveDepthConfiguration, TaskProfile
from aeon.domain.provenance import TRUSTED, Label
from aeon.domain.records import Counters, SupervisorAction, ToolCall
from aeon.domain.threads import ThreadContext


class RefinementLedger(msgspec.Struct, kw_only=True):
    """What the refinement gate has let through so far: attempts per fragment and in all, subplan depth per step,
    fragments flagged for manual intervention (refinement stops for them)."""

    attempts: dict[str, int] = msgspec.field(default_factory=dict)
    total: int = 0
    depth: dict[str, int] = msgspec.field(default_factory=dict)
    frozen: list[str] = msgspec.field(default_factory=list)


class RunState(msgspec.Struct, kw_only=True):
    """A run between two phases. `next_stage` is where it goes on from; `current` is the pass under way (opened
    before phase C, closed after D); `memory` is the key/value memory's content at the boundary."""

    correlation_id: str
    request: str
    started_at: str  # ISO 8601, also the execution_start_timestamp every phase context carries
    budget: BudgetState
    plan: Plan | None = None
    plan_given: bool = False
    pass_number: int = 0
    in_cycle: bool = False  # between the start of a cycle (A or B) and its end (after D)
    next_stage: Stage = Stage.PROFILE_AND_PLAN
    profiles: list[TaskProfile] = msgspec.field(default_factory=list)
    depth: AdaptiveDepthConfiguration | None = None
    report: SemanticValidationReport | None = None
    assessments: list[ConvergenceAssessment] = msgspec.field(default_factory=list)
    passes: list[ExecutionPass] = msgspec.field(default_factory=list)
    current: ExecutionPass | None = None
    pass_phases: list[PhaseTiming] = msgspec.field(default_factory=list)
    pass_start: str | None = None
    usage_mark: PassUsage = msgspec.field(default_factory=PassUsage)
    advisories: list[Advisory] = msgspec.field(default_factory=list)
    ledger: RefinementLedger = msgspec.field(default_factory=RefinementLedger)
    revise: list[str] = msgspec.field(default_factory=list)  # why the coming cycle re-enters phase A
    escalations: int = 0  # passes added by phase D, kept when a re-profiling reallocates TTL
    counters: Counters = msgspec.field(default_factory=Counters)
    usage: Ledger = msgspec.field(default_factory=Ledger)  # every LLM call: tokens, latency, cost
    warnings: list[str] = msgspec.field(default_factory=list)
    tool_calls: list[ToolCall] = msgspec.field(default_factory=list)
    supervisor_actions: list[SupervisorAction] = msgspec.field(default_factory=list)
    memory: dict[str, Any] = msgspec.field(default_factory=dict)
    approvals: list[ApprovalRecord] = msgspec.field(default_factory=list)  # every decision on a call, in order
    seen: Label = TRUSTED  # the join of every step output's label so far: what a prompt holding them all is
    labels: dict[str, Label] = msgspec.field(default_factory=dict)  # memory key → its writer's label (untrusted only)
    # a run of a thread: the conversation so far, as the planner's prompt shows it (absent for any other run)
    conversation: str | msgspec.UnsetType = msgspec.UNSET

    @property
    def profile(self) -> TaskProfile | None:
        return self.profiles[-1] if self.profiles else None

    # -- what the loop records: the only places its stages change the state ---------------------------------------
    def stands_before(self, stage: Stage) -> None:
        """The run is at the boundary before `stage`: where a checkpoint taken now goes on from."""
        self.next_stage = stage

    def begin_cycle(self, at: str) -> None:
        """A cycle starts (with phase A or B): the next pass, started at `at`."""
        self.in_cycle, self.pass_number, self.pass_start = True, self.pass_number + 1, at

    def end_cycle(self, *, escalation: int, revise: list[str] | None) -> None:
        """Phase D ended the cycle: the passes it added, and why the next cycle re-profiles (None: the run halts)."""
        self.escalations += escalation
        self.pass_phases, self.in_cycle = [], False
        if revise is not None:
            self.revise = revise

    def profiled(self, profile: TaskProfile, depth: AdaptiveDepthConfiguration) -> None:
        """Phase A's profile (a new version at each re-profiling) and the depth allocated for it."""
        self.profiles.append(profile)
        self.depth = depth

    def planned(self, plan: Plan) -> None:
        self.plan = plan

    def assessed(self, report: SemanticValidationReport, assessment: ConvergenceAssessment) -> None:
        """Phase C2's evaluation: the latest validation report, one more convergence assessment."""
        self.report = report
        self.assessments.append(assessment)

    def deepened(self, depth: AdaptiveDepthConfiguration) -> None:
        """Phase D's depth configuration (escalated or kept)."""
        self.depth = depth

    def advise(self, advisory: Advisory) -> None:
        self.advisories.append(advisory)

    def pass_opened(self, opened: ExecutionPass) -> None:
        self.current = opened

    def pass_closed(self, closed: ExecutionPass, *, usage_mark: PassUsage) -> None:
        """The pass is history; `usage_mark` is the LLM usage so far, from which the next pass counts its own."""
        self.passes.append(closed)
        self.current, self.usage_mark = None, usage_mark

    def phase_timed(self, timing: PhaseTiming) -> None:
        """A phase of the pass under way ended: its timing goes into the pass record."""
        self.pass_phases.append(timing)

    def llm_called(self, entry: CallEntry) -> None:
        """An LLM call, answered or not, is in the ledger; the budget has counted it already."""
        self.usage.add(entry)
        self.counters.llm_calls = self.budget.llm_calls

    def fell_back(self) -> None:
        """A step is done by LLM text because neither its tool nor a repair could run it."""
        self.counters.fallbacks += 1

    def approval_decided(self, record: ApprovalRecord) -> None:
        """A person decided on a tool call (a denied one is not to be planned again)."""
        self.approvals.append(record)

    def labelled(self, step: PlanStep, key: str) -> None:
        """`step`'s output (written to memory under `key`) is known: its label joins what the run has seen."""
        label = step.output_label
        if label is not TRUSTED:
            self.seen = self.seen.join(label)
        if not label.trusted:
            self.labels[key] = label
        else:
            self.labels.pop(key, None)

    def threaded(self, context: ThreadContext) -> None:
        """The run follows earlier turns of a thread: their conversation, and the labels of what it quotes (an
        untrusted earlier answer or memory value makes the run have seen untrusted data, as a tool output would)."""
        self.conversation = context.conversation
        self.labels.update(context.labels)
        self.seen = self.seen.join(context.label)

    def tool_failed(self) -> None:
        self.counters.tool_errors += 1

    def remember(self, memory: dict[str, Any]) -> None:
        """The key/value memory's content at this boundary, for a run resumed from here."""
        self.memory = memory

    def encode(self) -> bytes:
        return msgspec.json.encode(self)

    @classmethod
    def decode(cls, data: bytes) -> RunState:
        return msgspec.json.decode(data, type=cls)
