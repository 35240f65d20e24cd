"""Phase D: the adaptive-depth decision — halt (converged), continue, or escalate within the TTL cap."""

from __future__ import annotations

import msgspec

from aeon.application.judges.adaptive_depth import DepthOutcome, decide
from aeon.application.kernel.run import RunSettings, StageRun
from aeon.application.recorder import fields
from aeon.domain.context import EVALUATION_OFF, DecideInput
from aeon.domain.history import DepthRecord, ExecutionPass
from aeon.domain.log_run import DepthDecisionRecord
from aeon.domain.phases import HALT, Halt, Phase, Stage
from aeon.domain.profile import DepthDecision
from aeon.domain.progress import DepthDecided
from aeon.domain.refinement import RefinementActionType


class Decided(msgspec.Struct, kw_only=True):
    """Phase D's result; its fields named as the C->D and D->A/B contracts name them."""

    outcome: DepthOutcome
    depth_decision: DepthDecision
    ttl_remaining: int

    @property
    def next(self) -> Stage | Halt:
        """Halt when converged or out of depth; else a new cycle, from phase A when the profile is to be revised."""
        if self.outcome.decision is DepthDecision.HALT:
            return HALT
        return Stage.PROFILE_AND_PLAN if self.outcome.revise_profile else Stage.VALIDATE_PLAN


async def decide_depth(run: StageRun, settings: RunSettings, current: ExecutionPass) -> Decided:
    state = run.state
    evaluation = current.evaluation_results or EVALUATION_OFF
    run.enter(DecideInput(task_profile=run.profile, plan_state=run.plan, evaluation_results=evaluation))
    assert state.depth is not None
    subplanned = any(
        (c.applied and c.action.action_type is RefinementActionType.SUBPLAN_CREATE) or c.manual_intervention
        for c in current.refinement_changes
    )
    outcome = decide(
        state.depth,
        assessment=state.assessments[-1] if settings.evaluate else None,
        report=state.report,
        history=state.assessments,
        passes_done=state.pass_number,
        cap=settings.ttl,
        ttl_remaining=state.budget.ttl_remaining,
        recursion=subplanned,
        revisions=len(state.profiles) - 1,
    )
    state.deepened(outcome.configuration)
    record = DepthRecord.of(outcome.configuration)
    record.decision, record.decision_reason = outcome.decision.value, outcome.reason
    record.next_phase = (Phase.A if outcome.revise_profile else Phase.B).value
    record.profile_revision_reasons = outcome.revise_profile
    current.adaptive_depth = record
    run.record.log(DepthDecisionRecord(decision=outcome.decision.value, **fields(outcome.configuration)))
    run.record.notify(DepthDecided(decision=outcome.decision, reason=outcome.reason))
    return Decided(outcome=outcome, depth_decision=outcome.decision, ttl_remaining=state.budget.ttl_remaining)
