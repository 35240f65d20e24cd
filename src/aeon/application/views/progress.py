"""A run's progress events as a person follows them live: one line (or a few) per event, so a long LLM call never
looks like a hang. Lines of text with their style; writing them (stderr, colour or not) is the door's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import assert_never

from aeon.application.views.result import MARKS, Line, counted, short, verdict
from aeon.domain.advisories import (
    Advisory,
    FollowUpQuestion,
    ManualIntervention,
    ProfileClamped,
    RefinementFailed,
    RefinementRejected,
    RepairConflict,
)
from aeon.domain.plan import Plan, StepStatus
from aeon.domain.progress import (
    ApprovalDecided,
    ApprovalRequested,
    DepthDecided,
    Evaluated,
    LLMCallEnded,
    LLMCallStarted,
    LLMRetryRound,
    PhaseEnded,
    PhaseStarted,
    PlanMade,
    PrefixUncached,
    ProgressEvent,
    Refined,
    StepEnded,
    StepFallback,
    StepRepaired,
    StepStarted,
    SupervisorActed,
    Warned,
)

# a step's args as progress shows them: enough to recognise the call; the log and --history keep them whole
ARGS_SHOWN = 200


def progress_lines(event: ProgressEvent, *, verbose: bool = True) -> list[Line]:
    """The lines `event` shows; without `verbose`, the LLM calls and supervisor actions show none."""
    match event:
        case SupervisorActed() | LLMCallStarted() | LLMCallEnded() | PrefixUncached():
            return [_detail(event)] if verbose else []
        case PhaseStarted() | PhaseEnded() | PlanMade() | StepStarted() | StepEnded():
            return list(_run_lines(event))
        case _:
            return list(_other_lines(event))


def _run_lines(event: PhaseStarted | PhaseEnded | PlanMade | StepStarted | StepEnded) -> Iterator[Line]:
    """The run going on: a phase starting or failing, the plan made, a step starting and ending."""
    match event:
        case PhaseStarted():
            yield f"── pass {event.pass_number} · {event.phase}", "bold cyan"
        case PhaseEnded(outcome="success"):
            return  # the next phase's line says it went on
        case PhaseEnded():
            took = f"{event.duration_seconds:.1f} s"
            yield f"  phase {event.phase} of pass {event.pass_number}: {event.outcome} after {took}", None
        case PlanMade():
            yield from _plan(event.plan)
        case StepStarted():
            yield f"▶ [{event.index}/{event.total}] {event.step_id}: {event.description}", None
        case StepEnded():
            ok = event.status is StepStatus.COMPLETE
            detail = short(event.output) if ok else "; ".join(event.errors)
            yield f"{MARKS.get(event.status, '?')} {event.step_id} {event.status} ({event.mode or '-'}): {detail}", None
        case _:
            assert_never(event)


_Along = (
    Warned
    | StepRepaired
    | StepFallback
    | Evaluated
    | Refined
    | DepthDecided
    | LLMRetryRound
    | ApprovalRequested
    | ApprovalDecided
)


def _other_lines(event: _Along) -> Iterator[Line]:
    """What happened along the way: warnings, repairs, judgements, retries, approvals."""
    match event:
        case Warned():
            yield f"⚠ {event.message}", None
        case StepRepaired():
            yield f"↻ {event.step_id} repaired: now calls {event.tool} {short(event.args, ARGS_SHOWN)}", None
        case StepFallback():
            yield f"⤷ {event.step_id} could not be repaired: falling back to LLM reasoning", None
        case Evaluated():
            yield f"  evaluation: {verdict(event.assessment)}", "green" if event.assessment.converged else "yellow"
        case Refined():
            yield f"  refinement: {counted(event.applied, 'change')} applied, {event.rejected} rejected", None
            for a in event.advisories:
                yield f"  advisory {a.kind} {getattr(a, 'step_id', '')}: {short(_gist(a), 140)}", None
        case DepthDecided():
            yield f"  depth decision: {event.decision} — {event.reason}", None
        case LLMRetryRound():
            yield (
                (
                    f"⏳ provider still unavailable after {counted(event.attempts, 'attempt')} ({event.cause}): "
                    f"one more round for {event.purpose} in {event.wait_seconds:.1f} s"
                ),
                None,
            )
        case ApprovalRequested(request=r):
            yield f"✋ {r.step_id} waits for approval: {r.tool} {short(r.args, ARGS_SHOWN)}", "bold yellow"
        case ApprovalDecided(decision=d):
            said = "approved" + (" with edited arguments" if event.edited else "") if d.approved else "denied"
            why = f": {d.reason}" if d.reason else ""
            yield f"  {event.step_id} {said} by {d.by}{why}", None
        case _:
            assert_never(event)


def _plan(plan: Plan) -> Iterator[Line]:
    yield f"plan: {plan.goal} ({counted(len(plan.steps), 'step')})", None
    for s in plan.steps:
        how = f"tool {s.tool} {short(s.args, ARGS_SHOWN)}" if s.tool else "agent llm"
        yield f"  {s.step_index}. [{s.step_id}] {s.description} — {how}", None


def _detail(event: SupervisorActed | LLMCallStarted | LLMCallEnded | PrefixUncached) -> Line:
    """What only a verbose display shows: the supervisor at work and each LLM call."""
    match event:
        case SupervisorActed(action=a):
            ok = "ok" if a.succeeded else "failed"
            return f"  supervisor {a.kind} on {a.target} ({ok}): {short(a.detail, 120)}", None
        case PrefixUncached():
            return (
                f"  prompt prefix ~{event.prefix_tokens:,} tokens, under the {event.cache_min_tokens:,} that "
                f"{event.provider} caches: not cached",
                "dim",
            )
        case LLMCallStarted():
            where = f" · step {event.step_id}" if event.step_id else ""
            return f"  … LLM {event.purpose} ({event.phase}{where})", "dim"
        case LLMCallEnded(error=str(code)):
            return f"  … failed: {code}", "dim"
        case LLMCallEnded():
            rate = event.tokens_per_s
            speed = f" at {rate:.1f} tok/s" if rate is not None else ""
            return f"  … {event.completion_tokens} tokens{speed}", "dim"
        case _:
            assert_never(event)


def _gist(advisory: Advisory) -> str:
    """An advisory's one-line reason: its question, reason or resolution."""
    match advisory:
        case FollowUpQuestion():
            return advisory.question
        case ManualIntervention() | RefinementRejected() | ProfileClamped():
            return advisory.reason
        case RepairConflict():
            return advisory.resolution
        case RefinementFailed():
            return ""
        case _:
            assert_never(advisory)
