"""What changed from pass to pass: the convergence scores against their thresholds (a small chart) and the plan as
refinements changed it, each linked to the log record it came from; read from the run's execution history."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aeon.application.views.inspection import analyse
from aeon.application.views.timeline import Timeline

_PLANNED = ("description", "tool", "agent", "args")  # what a refinement changes in a step (status is execution)
WIDTH, HEIGHT, PAD = 320, 120, 24


@dataclass
class Score:
    pass_number: int
    completeness: float | None
    coherence: float | None
    converged: bool | None
    reasons: list[str]
    seq: int | None  # the evaluate call's record
    x: float = 0.0  # where the chart draws it
    y_completeness: float | None = None
    y_coherence: float | None = None


@dataclass
class Chart:
    """Scores per pass as SVG geometry: the viewBox is WIDTH × HEIGHT, 1.0 at the top."""

    scores: list[Score]
    min_completeness: float | None
    min_coherence: float | None
    completeness_points: str = ""
    coherence_points: str = ""
    threshold_y: dict[str, float] = field(default_factory=dict)


@dataclass
class StepChange:
    step_id: str
    change: str  # added, removed, changed, kept
    description: str
    was: dict[str, Any] = field(default_factory=dict)
    now: dict[str, Any] = field(default_factory=dict)


@dataclass
class PassChange:
    """Pass `pass_number`'s plan as it ran, and after the refinements at its end (the next pass's plan)."""

    pass_number: int
    steps: list[StepChange]
    refinements: list[dict[str, Any]]


def y_of(value: float) -> float:
    return round(PAD / 2 + (1.0 - max(0.0, min(1.0, value))) * (HEIGHT - PAD), 1)


def chart(history: dict[str, Any], timeline: Timeline) -> Chart | None:
    """The convergence chart of a history document (msgspec.to_builtins of an ExecutionHistory), or None when no
    pass was evaluated."""
    report = analyse(history)
    evaluations = _evaluate_seqs(timeline)
    scores = [
        Score(
            pass_number=p["pass_number"],
            completeness=_number(p["scores"]["completeness"]),
            coherence=_number(p["scores"]["coherence"]),
            converged=p["converged"],
            reasons=list(p["reason_codes"]),
            seq=evaluations.get(p["pass_number"]),
        )
        for p in report["passes"]
        if p["converged"] is not None
    ]
    if not scores:
        return None
    criteria = (history.get("configuration") or {}).get("convergence_criteria") or {}
    out = Chart(scores, _number(criteria.get("min_completeness")), _number(criteria.get("min_coherence")))
    step = (WIDTH - 2 * PAD) / max(1, len(scores) - 1)
    for i, score in enumerate(scores):
        score.x = round(PAD + i * step if len(scores) > 1 else WIDTH / 2, 1)
        score.y_completeness = None if score.completeness is None else y_of(score.completeness)
        score.y_coherence = None if score.coherence is None else y_of(score.coherence)
    out.completeness_points = " ".join(f"{c.x},{c.y_completeness}" for c in scores if c.y_completeness is not None)
    out.coherence_points = " ".join(f"{c.x},{c.y_coherence}" for c in scores if c.y_coherence is not None)
    for name, value in (("completeness", out.min_completeness), ("coherence", out.min_coherence)):
        if value is not None:
            out.threshold_y[name] = y_of(value)
    return out


def changes(history: dict[str, Any], timeline: Timeline) -> list[PassChange]:
    """Each pass that refined its plan: the steps before and after, and the refinements with their reasons."""
    report = analyse(history)
    found = _refinement_seqs(timeline)
    out = []
    for raw, summary in zip(history.get("passes") or [], report["passes"], strict=False):
        refinements = list(summary["refinements"])
        if not refinements:
            continue
        seqs = found.get(summary["pass_number"], [])
        for i, refinement in enumerate(refinements):
            refinement["seq"] = seqs[i] if i < len(seqs) else None
        before = (raw.get("plan_state") or {}).get("steps") or []
        after = (raw.get("final_plan_state") or raw.get("plan_state") or {}).get("steps") or []
        out.append(PassChange(summary["pass_number"], diff(before, after), refinements))
    return out


def diff(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[StepChange]:
    """The steps of `after` in order, each added, changed (what was, what is) or kept; then the removed ones."""
    was = {s.get("step_id"): s for s in before}
    now_ids = {s.get("step_id") for s in after}
    out = []
    for step in after:
        sid, old = str(step.get("step_id")), was.get(step.get("step_id"))
        if old is None:
            out.append(StepChange(sid, "added", str(step.get("description")), now=_planned(step)))
            continue
        moved = {k for k in _PLANNED if old.get(k) != step.get(k)}
        if moved:
            before_now = {k: old.get(k) for k in sorted(moved)}, {k: step.get(k) for k in sorted(moved)}
            out.append(StepChange(sid, "changed", str(step.get("description")), *before_now))
        else:
            out.append(StepChange(sid, "kept", str(step.get("description"))))
    out += [
        StepChange(str(s.get("step_id")), "removed", str(s.get("description")), was=_planned(s))
        for s in before
        if s.get("step_id") not in now_ids
    ]
    return out


def _planned(step: dict[str, Any]) -> dict[str, Any]:
    return {k: step.get(k) for k in _PLANNED if step.get(k) not in (None, {}, "")}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _evaluate_seqs(timeline: Timeline) -> dict[int, int]:
    """The seq of each pass's (last) evaluation call."""
    out = {}
    for p in timeline.passes:
        for phase in p.phases:
            for item in phase.items:
                if item.kind == "llm" and item.facts.get("purpose") == "evaluate":
                    out[p.number] = item.seq
    return out


def _refinement_seqs(timeline: Timeline) -> dict[int, list[int]]:
    return {
        p.number: [item.seq for phase in p.phases for item in phase.items if item.kind == "refinement"]
        for p in timeline.passes
    }
