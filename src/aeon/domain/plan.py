"""Plan and PlanStep: declarative data with an enforced step-status state machine and a fixed step order."""

from __future__ import annotations

import enum
from typing import Any

import msgspec

from aeon.domain.errors import IllegalTransition, PlanIntegrityError
from aeon.domain.provenance import TRUSTED, Label


class StepStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETE = "complete"
    FAILED = "failed"
    INVALID = "invalid"


class ClarityState(enum.StrEnum):
    CLEAR = "CLEAR"
    PARTIALLY_CLEAR = "PARTIALLY_CLEAR"
    BLOCKED = "BLOCKED"


class ExecutionMode(enum.StrEnum):
    """How a step was (or will be) executed; set by the executor, shown by the CLI."""

    TOOL = "tool"
    LLM = "llm"
    REPAIRED = "repaired"
    FALLBACK = "fallback"
    OPERATOR = "operator"  # the tool's output was given by the operator (a durable run's cut-off call marked done)
    DENIED = "denied"  # a person denied the call: the tool never ran, the step failed with their reason


_LEGAL: dict[StepStatus, frozenset[StepStatus]] = {
    StepStatus.PENDING: frozenset({StepStatus.RUNNING, StepStatus.INVALID, StepStatus.FAILED}),
    StepStatus.RUNNING: frozenset({StepStatus.COMPLETE, StepStatus.FAILED, StepStatus.INVALID}),
    StepStatus.COMPLETE: frozenset(),
    StepStatus.FAILED: frozenset(),
    StepStatus.INVALID: frozenset({StepStatus.PENDING}),
}


# Characters that make two ids look alike or reverse the text printed after them ("Trojan Source", CVE-2021-42574).
# str.isprintable() already refuses them (category Cf); they are named so that the message says what they do.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")


def step_id_problem(step_id: str) -> str | None:
    """Why `step_id` cannot name a step, or None: ids are shown in progress, results and logs, and compared by eye,
    so they hold printable characters only (no control, bidi or zero-width character, no space but U+0020)."""
    for ch in step_id:
        if ch.isprintable():
            continue
        kind = "a bidi control" if ch in _BIDI else "a zero-width character" if ch in _ZERO_WIDTH else "not printable"
        return (
            f"step_id {step_id!r} holds U+{ord(ch):04X} ({kind}); "
            "step ids must be printable text without bidi or zero-width characters"
        )
    return None


def shown_id(step_id: str) -> str:
    """The id as it may be printed: itself when printable, else its repr, with every hidden character escaped."""
    return step_id if step_id.isprintable() else repr(step_id)


def blocked_note(waiting: list[str]) -> str:
    return f"dependencies not complete: {', '.join(waiting)}"


class PlanStep(msgspec.Struct, kw_only=True):
    """One step of a plan. `tool` wins over `agent` when both are present (01, edge cases)."""

    step_id: str
    description: str
    status: StepStatus = StepStatus.PENDING
    tool: str | None = None
    agent: str | None = None
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    errors: list[str] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)  # e.g. output values recorded as text
    step_index: int = 0
    total_steps: int = 0
    incoming_context: str = ""
    handoff_to_next: str = ""
    clarity_state: ClarityState | None = None
    step_output: Any = None
    dependencies: list[str] = msgspec.field(default_factory=list)
    provides: list[str] = msgspec.field(default_factory=list)
    mode: ExecutionMode | None = None
    blocked_by: list[str] = msgspec.field(default_factory=list)  # dependencies that held the step back (invalid)
    requires_approval: bool = False  # a person approves this step's tool call first (a hand-written plan says so)
    origin: Label = TRUSTED  # who wrote the step and its literal args: untrusted when their prompt held untrusted data
    output_label: Label = TRUSTED  # the provenance of step_output

    def block(self, waiting: list[str]) -> None:
        """Hold the step back until `waiting` are complete: invalid, with the reason as its only error."""
        self.blocked_by = list(waiting)
        self.errors = [*self.errors, blocked_note(waiting)]
        self.transition(StepStatus.INVALID)

    def held_only_by_dependencies(self) -> bool:
        """Invalid for no reason but its dependencies: `block` (the only writer of `blocked_by`) appended its note
        to a step without errors, and nothing was added since."""
        return self.status is StepStatus.INVALID and bool(self.blocked_by) and len(self.errors) == 1

    def rearm(self) -> None:
        """Back to pending once what held it can run."""
        self.blocked_by, self.errors = [], []
        self.transition(StepStatus.PENDING)

    @property
    def tool_never_ran(self) -> bool:
        """A tool step that fell back to LLM text: its output stands where the tool's should be, unverified."""
        return self.mode is ExecutionMode.FALLBACK and self.tool is not None

    @property
    def executed(self) -> bool:
        return self.status in (StepStatus.COMPLETE, StepStatus.FAILED)

    def transition(self, new: StepStatus) -> None:
        """Move to `new`, or raise IllegalTransition naming the step and both states."""
        if new not in _LEGAL[self.status]:
            raise IllegalTransition(f"step {self.step_id!r}: {self.status.value} -> {new.value} is not allowed")
        self.status = new


class Plan(msgspec.Struct, kw_only=True):
    """A goal and its ordered steps. The object keeps its identity through execution and repair (never a raw dict)."""

    goal: str
    steps: list[PlanStep] = msgspec.field(default_factory=list)

    def __post_init__(self) -> None:
        self.reindex()

    def reindex(self) -> None:
        total = len(self.steps)
        for i, step in enumerate(self.steps, start=1):
            step.step_index = i
            step.total_steps = total

    def step(self, step_id: str) -> PlanStep:
        for s in self.steps:
            if s.step_id == step_id:
                return s
        raise KeyError(step_id)

    def replace_step(self, step_id: str, new: PlanStep) -> PlanStep:
        """Swap one step in place: same position, same step_id, plan object unchanged."""
        old = self.step(step_id)
        if new.step_id != step_id:
            raise PlanIntegrityError(f"replacement for step {step_id!r} carries step_id {new.step_id!r}")
        if old.executed:
            raise PlanIntegrityError(f"step {step_id!r} has already run ({old.status.value}) and cannot be replaced")
        self.steps[self.steps.index(old)] = new
        self.reindex()
        return new

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out
