"""The refinement gate: accepts or rejects the refiner's proposals as surgical plan deltas (02 US2).

Per-fragment (3) and global (10) refinement limits; subplan depth tracked per step and capped at 5 (deeper is
flagged for manual intervention, nothing is lost); every refined fragment is validated before it is accepted;
a validator repair that conflicts with a refinement is kept as an advisory (the planner wins); vague fragments get
follow-up questions. What it has let through lives in the run state's ledger, so a rebuilt run keeps its limits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from aeon.application.plans.semantic_validation import deterministic_issues
from aeon.domain.advisories import (
    Advisory,
    FollowUpQuestion,
    ManualIntervention,
    RefinementRejected,
    RepairConflict,
)
from aeon.domain.approval import ApprovalRecord
from aeon.domain.evaluation import IssueType, SemanticValidationReport, Severity, ValidationIssue
from aeon.domain.plan import ClarityState, Plan, StepStatus
from aeon.domain.refinement import MAX_DEPTH, ActionOutcome, RefinementAction, RefinementActionType, apply_actions
from aeon.domain.run_state import RefinementLedger
from aeon.domain.tools import ToolSpec

PER_FRAGMENT_LIMIT = 3
GLOBAL_LIMIT = 10


class Acceptance(msgspec.Struct, kw_only=True):
    outcomes: list[ActionOutcome]
    advisories: list[Advisory]


def fragment_of(action: RefinementAction) -> str:
    return action.target_step_id or (action.new_step.step_id if action.new_step else "") or "(plan)"


class RefinementGate:
    def __init__(
        self,
        tools: Mapping[str, ToolSpec],
        ledger: RefinementLedger,
        *,
        per_fragment: int = PER_FRAGMENT_LIMIT,
        global_limit: int = GLOBAL_LIMIT,
        approvals: Sequence[ApprovalRecord] = (),
    ) -> None:
        self._tools = dict(tools)
        self.ledger = ledger
        self._approvals = approvals  # the run's list: calls denied later in the run count too
        self._per_fragment, self._global = per_fragment, global_limit

    def accept(
        self,
        plan: Plan,
        actions: Sequence[RefinementAction],
        report: SemanticValidationReport | None,
        *,
        pass_number: int,
    ) -> Acceptance:
        outcomes: list[ActionOutcome] = []
        conflicts: list[Advisory] = []
        for action in actions:
            outcome = self._admit(plan, action)
            outcomes.append(outcome)
            if outcome.applied:  # a rejected refinement cannot win a conflict
                conflicts += self._conflicts(action, report, pass_number)
        advisories = [*conflicts, *self._rejections(plan, outcomes, pass_number)]
        rearm(plan)
        return Acceptance(outcomes=outcomes, advisories=advisories)

    def _admit(self, plan: Plan, action: RefinementAction) -> ActionOutcome:
        """Apply one action if the limits and the fragment's validation allow it; the outcome either way."""
        ledger, fragment = self.ledger, fragment_of(action)
        if fragment in ledger.frozen:
            return _rejected(action, f"fragment {fragment} awaits manual intervention: refinement stopped for it")
        if (denied := self._denied_again(action)) is not None:
            tool, said = denied.request.tool, denied.decision
            again = f"it plans again the call of tool {tool!r} a person denied ({said.by}: {said.reason})"
            return _rejected(action, f"{again}: a denied call is not re-planned as it was")
        if ledger.total >= self._global:
            return _rejected(action, f"global refinement limit ({self._global}) reached: plan kept as is")
        if ledger.attempts.get(fragment, 0) >= self._per_fragment:
            limit = f"fragment {fragment} reached its refinement limit ({self._per_fragment})"
            return _rejected(action, f"{limit}: best available version kept")
        ledger.attempts[fragment] = ledger.attempts.get(fragment, 0) + 1
        ledger.total += 1
        if action.action_type is RefinementActionType.SUBPLAN_CREATE and action.subplan is not None:
            action.subplan.depth_level = ledger.depth.get(fragment, 0) + 1
        if problem := self._fragment_problem(plan, action):
            return _rejected(action, f"refined fragment failed validation: {problem}")
        (outcome,) = apply_actions(plan, [action])
        if outcome.applied and action.subplan is not None:
            for sub in plan.steps:
                if sub.step_id.startswith(f"{fragment}.") and sub.step_id not in ledger.depth:
                    ledger.depth[sub.step_id] = action.subplan.depth_level
        return outcome

    def _denied_again(self, action: RefinementAction) -> ApprovalRecord | None:
        """The denied call this action would plan again (same tool, same arguments), if any."""
        steps = [*([action.new_step] if action.new_step else []), *(action.subplan.substeps if action.subplan else [])]
        denied = [a for a in self._approvals if not a.decision.approved]
        for step in steps:
            for call in denied:
                if step.tool == call.request.tool and step.args == call.request.args:
                    return call
        return None

    def _rejections(self, plan: Plan, outcomes: Sequence[ActionOutcome], pass_number: int) -> list[Advisory]:
        out: list[Advisory] = []
        for o in outcomes:
            sid = fragment_of(o.action)
            if o.manual_intervention:
                if sid not in self.ledger.frozen:
                    self.ledger.frozen.append(sid)
                note = f"needs manual intervention: {o.reason}"
                if sid in {s.step_id for s in plan.steps} and note not in plan.step(sid).errors:
                    plan.step(sid).errors.append(note)
                out.append(
                    ManualIntervention(pass_number=pass_number, step_id=sid, reason=o.reason, max_depth=MAX_DEPTH)
                )
            elif not o.applied:
                out.append(RefinementRejected(pass_number=pass_number, step_id=sid, reason=o.reason))
        return out

    def _fragment_problem(self, plan: Plan, action: RefinementAction) -> str | None:
        """Validate the fragment on a copy of the plan before accepting it."""
        trial = msgspec.json.decode(msgspec.json.encode(plan), type=Plan)
        (outcome,) = apply_actions(trial, [action])
        if not outcome.applied:
            return None  # apply_actions rejects it with its own reason; nothing new to validate

        def key(i: ValidationIssue) -> tuple[str, str | None, str]:
            return i.type.value, (i.location or {}).get("step_id"), i.description

        before = {key(i) for i in deterministic_issues(plan, self._tools)}
        for issue in deterministic_issues(trial, self._tools):
            if issue.severity.rank >= Severity.HIGH.rank and key(issue) not in before:
                return issue.description
        return None

    @staticmethod
    def _conflicts(
        action: RefinementAction, report: SemanticValidationReport | None, pass_number: int
    ) -> list[Advisory]:
        """A validator repair for the same step as this refinement: surfaced, planner wins."""
        fragment = fragment_of(action)
        return [
            RepairConflict(
                pass_number=pass_number,
                step_id=fragment,
                validator_repair=issue.proposed_repair,
                issue_id=issue.issue_id,
                planner_action=action.action_type.value,
            )
            for issue in (report.issues if report else [])
            if issue.proposed_repair and (issue.location or {}).get("step_id") == fragment
        ]


def _rejected(action: RefinementAction, reason: str) -> ActionOutcome:
    return ActionOutcome(action=action, applied=False, reason=reason, advisory=True)


def follow_up_questions(plan: Plan, report: SemanticValidationReport | None, pass_number: int) -> list[Advisory]:
    """Questions for ambiguous or low-specificity fragments, recorded in the history."""
    asked: dict[str, str] = {}
    for issue in report.issues if report else []:
        sid = (issue.location or {}).get("step_id")
        if issue.type is IssueType.SPECIFICITY and sid:
            what = "what exactly should it produce, from which inputs?"
            asked.setdefault(sid, f"Step {sid} is not specific enough ({issue.description}): {what}")
    for step in plan.steps:
        unclear = step.clarity_state in (ClarityState.PARTIALLY_CLEAR, ClarityState.BLOCKED)
        if unclear and (step.status is not StepStatus.COMPLETE or step.clarity_state is ClarityState.PARTIALLY_CLEAR):
            state = step.clarity_state.value if step.clarity_state else ""
            missing = "what information is missing to carry it out?"
            asked.setdefault(step.step_id, f"Step {step.step_id} ('{step.description}') was {state}: {missing}")
    return [FollowUpQuestion(pass_number=pass_number, step_id=sid, question=q) for sid, q in asked.items()]


def rearm(plan: Plan) -> None:
    """Steps held back only because a dependency was not complete return to pending once refinement has given
    every dependency a way to run (none failed or invalid any more): invalid -> pending (04 PlanStep)."""
    status = {s.step_id: s.status for s in plan.steps}
    for step in plan.steps:
        if step.held_only_by_dependencies() and all(
            status.get(d) in (StepStatus.PENDING, StepStatus.COMPLETE) for d in step.dependencies
        ):
            step.rearm()
