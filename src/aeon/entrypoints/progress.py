"""Live progress for a human on stderr: one line per event, so a long LLM call never looks like a hang."""

from __future__ import annotations

from typing import TextIO, assert_never

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
    ProgressEvent,
    Refined,
    StepEnded,
    StepFallback,
    StepRepaired,
    StepStarted,
    SupervisorActed,
    Warned,
)
from aeon.entrypoints.render import MARKS, Lines, counted, short, verdict

# a step's args as progress shows them: enough to recognise the call; the log and --history keep them whole
ARGS_SHOWN = 200


class ConsoleProgress:
    """ProgressPort that prints one line per event, so a long LLM call never looks like a hang; without `verbose`,
    the LLM calls and supervisor actions are left out."""

    def __init__(self, stream: TextIO, *, verbose: bool = True) -> None:
        self._line = Lines(stream)
        self._verbose = verbose

    def update(self, event: ProgressEvent) -> None:
        line = self._line
        match event:
            case PhaseStarted():
                line(f"── pass {event.pass_number} · {event.phase}", "bold cyan")
            case PhaseEnded(outcome="success"):
                return  # the next phase's line says it went on
            case PhaseEnded():
                took = f"{event.duration_seconds:.1f} s"
                line(f"  phase {event.phase} of pass {event.pass_number}: {event.outcome} after {took}")
            case PlanMade():
                self._plan(event.plan)
            case StepStarted():
                line(f"▶ [{event.index}/{event.total}] {event.step_id}: {event.description}")
            case StepEnded():
                ok = event.status is StepStatus.COMPLETE
                detail = short(event.output) if ok else "; ".join(event.errors)
                line(f"{MARKS.get(event.status, '?')} {event.step_id} {event.status} ({event.mode or '-'}): {detail}")
            case Warned():
                line(f"⚠ {event.message}")
            case StepRepaired():
                line(f"↻ {event.step_id} repaired: now calls {event.tool} {short(event.args, ARGS_SHOWN)}")
            case StepFallback():
                line(f"⤷ {event.step_id} could not be repaired: falling back to LLM reasoning")
            case Evaluated():
                line(f"  evaluation: {verdict(event.assessment)}", "green" if event.assessment.converged else "yellow")
            case Refined():
                line(f"  refinement: {counted(event.applied, 'change')} applied, {event.rejected} rejected")
                for a in event.advisories:
                    line(f"  advisory {a.kind} {getattr(a, 'step_id', '')}: {short(_gist(a), 140)}")
            case DepthDecided():
                line(f"  depth decision: {event.decision} — {event.reason}")
            case LLMRetryRound():
                line(
                    f"⏳ provider still unavailable after {counted(event.attempts, 'attempt')} ({event.cause}): "
                    f"one more round for {event.purpose} in {event.wait_seconds:.1f} s"
                )
            case ApprovalRequested(request=r):
                line(f"✋ {r.step_id} waits for approval: {r.tool} {short(r.args, ARGS_SHOWN)}", "bold yellow")
            case ApprovalDecided(decision=d):
                said = "approved" + (" with edited arguments" if event.edited else "") if d.approved else "denied"
                why = f": {d.reason}" if d.reason else ""
                line(f"  {event.step_id} {said} by {d.by}{why}")
            case SupervisorActed() | LLMCallStarted() | LLMCallEnded():
                if self._verbose:
                    self._detail(event)
            case _:
                assert_never(event)

    def _plan(self, plan: Plan) -> None:
        self._line(f"plan: {plan.goal} ({counted(len(plan.steps), 'step')})")
        for s in plan.steps:
            how = f"tool {s.tool} {short(s.args, ARGS_SHOWN)}" if s.tool else "agent llm"
            self._line(f"  {s.step_index}. [{s.step_id}] {s.description} — {how}")

    def _detail(self, event: SupervisorActed | LLMCallStarted | LLMCallEnded) -> None:
        """What only a verbose display shows: the supervisor at work and each LLM call."""
        match event:
            case SupervisorActed(action=a):
                ok = "ok" if a.succeeded else "failed"
                self._line(f"  supervisor {a.kind} on {a.target} ({ok}): {short(a.detail, 120)}")
            case LLMCallStarted():
                where = f" · step {event.step_id}" if event.step_id else ""
                self._line(f"  … LLM {event.purpose} ({event.phase}{where})", "dim")
            case LLMCallEnded(error=str(code)):
                self._line(f"  … failed: {code}", "dim")
            case LLMCallEnded():
                rate = event.tokens_per_s
                speed = f" at {rate:.1f} tok/s" if rate is not None else ""
                self._line(f"  … {event.completion_tokens} tokens{speed}", "dim")
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
