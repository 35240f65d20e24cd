"""Phase D: the adaptive-depth decision — halt (converged), continue, or escalate within the TTL cap."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from aeon.application.adaptive_depth import DepthOutcome, decide
from aeon.application.run import Run
from aeon.application.wiring import RunServices
from aeon.domain.history import DepthRecord, ExecutionPass
from aeon.domain.phases import Stage
from aeon.domain.progress import DepthDecided
from aeon.domain.refinement import RefinementActionType


class Decided(msgspec.Struct, kw_only=True):
    outcome: DepthOutcome
    ttl_remaining: int

    def contract_values(self) -> Mapping[str, Any]:
        return {"depth_decision": self.outcome.decision, "ttl_remaining": self.ttl_remaining}


async def decide_depth(run: Run, k: RunServices, xp: ExecutionPass) -> Decided:
    s = run.state
    evaluation = xp.evaluation_results or "evaluation is off"
    run.enter(Stage.DECIDE, task_profile=s.profile, plan_state=run.plan, evaluation_results=evaluation)
    assert s.depth is not None
    subplanned = any(
        (c.applied and c.action.action_type is RefinementActionType.SUBPLAN_CREATE) or c.manual_intervention
        for c in xp.refinement_changes
    )
    outcome = decide(
        s.depth,
        assessment=s.assessments[-1] if k.settings.evaluate else None,
        report=s.report,
        history=s.assessments,
        passes_done=s.pass_number,
        cap=k.settings.ttl,
        ttl_remaining=s.budget.ttl_remaining,
        recursion=subplanned,
        revisions=len(s.profiles) - 1,
    )
    s.depth = outcome.configuration
    record = DepthRecord.of(s.depth)
    record.decision, record.decision_reason = outcome.decision.value, outcome.reason
    record.next_phase = "A" if outcome.revise_profile else "B"
    record.profile_revision_reasons = outcome.revise_profile
    xp.adaptive_depth = record
    run.record.depth("depth_decision", s.depth, decision=outcome.decision.value)
    run.record.notify(DepthDecided(decision=outcome.decision, reason=outcome.reason))
    return Decided(outcome=outcome, ttl_remaining=s.budget.ttl_remaining)
