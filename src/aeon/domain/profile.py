"""TaskProfile and AdaptiveDepthConfiguration: how hard a task looks and what budget that earns it (04)."""

from __future__ import annotations

import enum

import msgspec


class ToolUsage(enum.StrEnum):
    NONE = "none"
    MINIMAL = "minimal"
    MODERATE = "moderate"
    EXTENSIVE = "extensive"


class Breadth(enum.StrEnum):
    NARROW = "narrow"
    MODERATE = "moderate"
    BROAD = "broad"


class Confidence(enum.StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class ReasoningMode(enum.StrEnum):
    SHALLOW = "shallow"
    BALANCED = "balanced"
    DEEP = "deep"


class DepthDecision(enum.StrEnum):
    """Phase D's answer: run another cycle as is, run it with more depth, or stop."""

    CONTINUE = "continue"
    ESCALATE = "escalate"
    HALT = "halt"


class TaskProfile(msgspec.Struct, frozen=True, kw_only=True):
    profile_version: int
    reasoning_depth: int  # 1..5
    information_sufficiency: float  # 0.0..1.0
    expected_tool_usage: ToolUsage
    output_breadth: Breadth
    confidence_requirement: Confidence
    raw_inference: str

    def problems(self) -> list[str]:
        out = []
        if not 1 <= self.reasoning_depth <= 5:
            out.append(f"reasoning_depth {self.reasoning_depth} is outside 1..5")
        if not 0.0 <= self.information_sufficiency <= 1.0:
            out.append(f"information_sufficiency {self.information_sufficiency} is outside 0.0..1.0")
        if not self.raw_inference.strip():
            out.append("raw_inference is empty")
        return out


class AdaptiveDepthConfiguration(msgspec.Struct, kw_only=True):
    detected_complexity: str  # very_low | low | moderate | high | very_high
    allocated_ttl: int
    reasoning_mode: ReasoningMode
    adjustment_reason: str
    heuristics_used: list[str] = msgspec.field(default_factory=list)
    ambiguity_score: float | None = None
    uncertainty_score: float | None = None


def stabilize(new: TaskProfile, previous: TaskProfile | None) -> tuple[TaskProfile, str | None]:
    """Tier stability: a re-inferred reasoning_depth stays within ±1 of the previous one.

    Returns the profile to use and, when it had to be clamped, a note saying so for the log.
    """
    if previous is None or abs(new.reasoning_depth - previous.reasoning_depth) <= 1:
        return new, None
    lo, hi = previous.reasoning_depth - 1, previous.reasoning_depth + 1
    clamped = max(lo, min(hi, new.reasoning_depth))
    note = (
        f"reasoning_depth {new.reasoning_depth} clamped to {clamped}: within one tier of the previous "
        f"{previous.reasoning_depth}"
    )
    return msgspec.structs.replace(new, reasoning_depth=clamped), note
