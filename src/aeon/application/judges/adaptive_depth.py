"""Adaptive depth: TTL allocation from the TaskProfile (phase A) and the continue/escalate/halt decision (phase D).

Deterministic heuristics over the profile, validation issues and convergence results. Every allocation stays
within the configured TTL cap and says why.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from aeon.domain.evaluation import ConvergenceAssessment, IssueType, SemanticValidationReport, Severity
from aeon.domain.profile import (
    AdaptiveDepthConfiguration,
    Breadth,
    Confidence,
    DepthDecision,
    ReasoningMode,
    TaskProfile,
)

_BREADTH = {Breadth.NARROW: 0.0, Breadth.MODERATE: 0.5, Breadth.BROAD: 1.0}
_CONFIDENCE = {Confidence.LOW: 0.0, Confidence.MEDIUM: 0.5, Confidence.HIGH: 1.0}
# complexity score upper bounds → (category, passes wanted, reasoning mode)
_TIERS = (
    (2.0, "very_low", 1, ReasoningMode.SHALLOW),
    (3.0, "low", 2, ReasoningMode.SHALLOW),
    (4.5, "moderate", 3, ReasoningMode.BALANCED),
    (6.0, "high", 4, ReasoningMode.DEEP),
    (99.0, "very_high", 5, ReasoningMode.DEEP),
)


def complexity(profile: TaskProfile) -> tuple[float, list[str]]:
    """A score from the five profile dimensions, and the heuristics that contributed to it."""
    ambiguity = 1.0 - profile.information_sufficiency
    parts = {
        "reasoning_depth": float(profile.reasoning_depth),
        "ambiguity": round(2.0 * ambiguity, 3),
        "output_breadth": _BREADTH[profile.output_breadth],
        "confidence_requirement": _CONFIDENCE[profile.confidence_requirement],
    }
    used = [f"{k}+{v:g}" for k, v in parts.items() if v > 0]
    return sum(parts.values()), used


def allocate(
    profile: TaskProfile, *, cap: int, revised_because: Sequence[str] = (), escalations: int = 0
) -> AdaptiveDepthConfiguration:
    """TTL for this task: more passes for deeper, vaguer, broader tasks; never above `cap`.

    `revised_because` names the new information behind a re-profiling at a pass boundary; `escalations`
    are passes phase D already added, which a re-profiling keeps.
    """
    score, used = complexity(profile)
    _, category, wanted, mode = next(t for t in _TIERS if score < t[0])
    allocated = max(1, min(wanted + escalations, cap)) if cap > 0 else 0
    capped = " (capped by run.ttl)" if wanted > cap else ""
    revised = f"profile v{profile.profile_version} after {'; '.join(revised_because)}: " if revised_because else ""
    if escalations:
        revised += f"{escalations} escalation(s) kept; "
    return AdaptiveDepthConfiguration(
        detected_complexity=category,
        allocated_ttl=allocated,
        reasoning_mode=mode,
        adjustment_reason=f"{revised}complexity {score:.2f} ({category}) wants {wanted} pass(es); allocated "
        f"{allocated} of cap {cap}{capped}",
        heuristics_used=[*used, *(["profile_revision"] if revised_because else [])],
        ambiguity_score=round(1.0 - profile.information_sufficiency, 3),
    )


class DepthOutcome(msgspec.Struct, kw_only=True):
    decision: DepthDecision
    configuration: AdaptiveDepthConfiguration
    reason: str
    ttl_delta: int = 0
    revise_profile: list[str] = msgspec.field(default_factory=list)  # why the next cycle re-enters phase A


MAX_REVISIONS = 2


def revision_reasons(
    report: SemanticValidationReport | None,
    assessment: ConvergenceAssessment | None,
    *,
    recursion: bool,
    revisions: int,
) -> list[str]:
    """New information that warrants re-inferring the TaskProfile at the pass boundary."""
    if assessment is None or assessment.converged or revisions >= MAX_REVISIONS:
        return []
    reasons = []
    if report is not None and report.overall_severity.rank >= Severity.HIGH.rank:
        reasons.append(f"validation found {report.overall_severity.value} issues")
    vague = [i for i in report.issues if i.type is IssueType.SPECIFICITY] if report else []
    if any(i.severity.rank >= Severity.MEDIUM.rank for i in vague):  # a LOW nit is no new information
        reasons.append("fragments lack specificity")
    if recursion:
        reasons.append("the recursive planner decomposed or flagged fragments")
    return reasons


def decide(
    current: AdaptiveDepthConfiguration,
    *,
    assessment: ConvergenceAssessment | None,
    report: SemanticValidationReport | None,
    history: Sequence[ConvergenceAssessment],
    passes_done: int,
    cap: int,
    ttl_remaining: int,
    recursion: bool = False,
    revisions: int = 0,
) -> DepthOutcome:
    """Phase D: halt when converged; escalate (one more pass, deeper mode) on severe issues or repeated failure,
    within the cap; otherwise continue. `ttl_remaining` is what is left before this cycle's decrement."""
    if assessment is None or assessment.converged:
        why = "converged" if assessment else "evaluation is off: one pass"
        return DepthOutcome(decision=DepthDecision.HALT, configuration=current, reason=why)
    revise = revision_reasons(report, assessment, recursion=recursion, revisions=revisions)
    signals = []
    if report is not None and report.overall_severity.rank >= Severity.HIGH.rank:
        signals.append(f"validation severity {report.overall_severity.value}")
    if len(history) >= 2 and not history[-2].converged:
        signals.append("convergence failed in consecutive passes")
    headroom = cap - passes_done - (ttl_remaining - 1)
    if signals and headroom > 0:
        mode = ReasoningMode.DEEP
        config = msgspec.structs.replace(
            current,
            allocated_ttl=current.allocated_ttl + 1,
            reasoning_mode=mode,
            adjustment_reason=f"escalated: {'; '.join(signals)}; +1 pass ({current.allocated_ttl + 1} of cap {cap})",
            heuristics_used=["escalation", *signals],
        )
        return DepthOutcome(
            decision=DepthDecision.ESCALATE,
            configuration=config,
            reason=config.adjustment_reason,
            ttl_delta=1,
            revise_profile=revise,
        )
    why = f"not converged ({', '.join(assessment.reason_codes)})"
    if signals:
        why += f"; escalation wanted ({'; '.join(signals)}) but the TTL cap {cap} is reached"
    return DepthOutcome(decision=DepthDecision.CONTINUE, configuration=current, reason=why, revise_profile=revise)


def passes_after(
    current: AdaptiveDepthConfiguration,
    *,
    assessment: ConvergenceAssessment,
    report: SemanticValidationReport | None,
    history: Sequence[ConvergenceAssessment],
    passes_done: int,
    cap: int,
    ttl_remaining: int,
) -> int:
    """How many passes phase D will let follow this one (0: the run ends with it), known once the pass is evaluated:
    `decide` asked ahead, before a refinement that only a later pass can use. What D decides does not depend on the
    refinement (it only adds reasons to re-profile), and no pass boundary adds passes once the TTL is spent."""
    outcome = decide(
        current,
        assessment=assessment,
        report=report,
        history=history,
        passes_done=passes_done,
        cap=cap,
        ttl_remaining=ttl_remaining,
    )
    return 0 if outcome.decision is DepthDecision.HALT else max(ttl_remaining + outcome.ttl_delta - 1, 0)
