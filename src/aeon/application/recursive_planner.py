"""The recursive planner: accepts refinement proposals as surgical plan deltas (02 US2, FR-009..016, 065, 079, 082).

Per-fragment (3) and global (10) refinement limits; subplan depth tracked per step and capped at 5 (deeper is
flagged for manual intervention, nothing is lost); every refined fragment is validated before it is accepted;
a validator repair that conflicts with a refinement is kept as an advisory (the planner wins); vague fragments get
follow-up questions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from aeon.application.executor import DEPENDENCY_NOTE
from aeon.application.semantic_validation import deterministic_issues
from aeon.domain.evaluation import IssueType, SemanticValidationReport, Severity, ValidationIssue
from aeon.domain.plan import ClarityState, Plan, StepStatus
from aeon.domain.refinement import MAX_DEPTH, ActionOutcome, RefinementAction, RefinementActionType, apply_actions
from aeon.domain.tools import ToolSpec

PER_FRAGMENT_LIMIT = 3
GLOBAL_LIMIT = 10


class Acceptance(msgspec.Struct, kw_only=True):
    outcomes: list[ActionOutcome]
    advisories: list[dict[str, Any]]


def _fragment(action: RefinementAction) -> str:
    return action.target_step_id or (action.new_step.step_id if action.new_step else "") or "(plan)"


class RecursivePlanner:
    def __init__(
        self, tools: Mapping[str, ToolSpec], *, per_fragment: int = PER_FRAGMENT_LIMIT, global_limit: int = GLOBAL_LIMIT
    ) -> None:
        self._tools = dict(tools)
        self._per_fragment, self._global = per_fragment, global_limit
        self.attempts: Counter[str] = Counter()
        self.total = 0
        self.depth: dict[str, int] = {}  # step id → nesting depth (0 for the original plan's steps)
        self.frozen: set[str] = set()  # fragments flagged for manual intervention: refinement stops (FR-082)

    def accept(
        self,
        plan: Plan,
        actions: Sequence[RefinementAction],
        report: SemanticValidationReport | None,
        *,
        pass_number: int,
    ) -> Acceptance:
        advisories: list[dict[str, Any]] = []
        outcomes: list[ActionOutcome] = []

        def reject(action: RefinementAction, reason: str, *, manual: bool = False) -> None:
            outcomes.append(
                ActionOutcome(action=action, applied=False, reason=reason, advisory=True, manual_intervention=manual)
            )

        for action in actions:
            fragment = _fragment(action)
            if fragment in self.frozen:
                reject(action, f"fragment {fragment} awaits manual intervention: refinement stopped for it")
                continue
            if self.total >= self._global:
                reject(action, f"global refinement limit ({self._global}) reached: plan kept as is")
                continue
            if self.attempts[fragment] >= self._per_fragment:
                reject(
                    action,
                    f"fragment {fragment} reached its refinement limit ({self._per_fragment}): best "
                    "available version kept",
                )
                continue
            self.attempts[fragment] += 1
            self.total += 1
            if action.action_type is RefinementActionType.SUBPLAN_CREATE and action.subplan is not None:
                action.subplan.depth_level = self.depth.get(fragment, 0) + 1
            if problem := self._fragment_problem(plan, action):
                reject(action, f"refined fragment failed validation: {problem}")
                continue
            (outcome,) = apply_actions(plan, [action])
            outcomes.append(outcome)
            if outcome.applied:  # a rejected refinement cannot win a conflict
                advisories += self._conflicts(action, report, pass_number)
            if outcome.applied and action.subplan is not None:
                for sub in plan.steps:
                    if sub.step_id.startswith(f"{fragment}.") and sub.step_id not in self.depth:
                        self.depth[sub.step_id] = action.subplan.depth_level
        for o in outcomes:
            if o.manual_intervention:
                sid = _fragment(o.action)
                self.frozen.add(sid)
                note = f"needs manual intervention: {o.reason}"
                if sid in {s.step_id for s in plan.steps} and note not in plan.step(sid).errors:
                    plan.step(sid).errors.append(note)
                advisories.append(
                    {
                        "kind": "manual_intervention",
                        "pass_number": pass_number,
                        "step_id": sid,
                        "reason": o.reason,
                        "max_depth": MAX_DEPTH,
                    }
                )
            elif not o.applied:
                advisories.append(
                    {
                        "kind": "refinement_rejected",
                        "pass_number": pass_number,
                        "step_id": _fragment(o.action),
                        "reason": o.reason,
                    }
                )
        rearm(plan)
        return Acceptance(outcomes=outcomes, advisories=advisories)

    def _fragment_problem(self, plan: Plan, action: RefinementAction) -> str | None:
        """Validate the fragment on a copy of the plan before accepting it (FR-013, FR-049)."""
        trial = msgspec.convert(msgspec.to_builtins(plan), Plan)
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

    def _conflicts(
        self, action: RefinementAction, report: SemanticValidationReport | None, pass_number: int
    ) -> list[dict[str, Any]]:
        """A validator repair for the same step as this refinement: surfaced, planner wins (FR-079)."""
        fragment = _fragment(action)
        out = []
        for issue in report.issues if report else []:
            where = (issue.location or {}).get("step_id")
            if issue.proposed_repair and where == fragment:
                out.append(
                    {
                        "kind": "repair_conflict",
                        "pass_number": pass_number,
                        "step_id": fragment,
                        "validator_repair": issue.proposed_repair,
                        "issue_id": issue.issue_id,
                        "planner_action": action.action_type.value,
                        "resolution": "planner refinement applied; validator repair recorded as advisory",
                    }
                )
        return out

    def follow_up_questions(
        self, plan: Plan, report: SemanticValidationReport | None, pass_number: int
    ) -> list[dict[str, Any]]:
        """Questions for ambiguous or low-specificity fragments (FR-011, FR-012), recorded in the history."""
        asked: dict[str, str] = {}
        for issue in report.issues if report else []:
            sid = (issue.location or {}).get("step_id")
            if issue.type is IssueType.SPECIFICITY and sid:
                asked.setdefault(
                    sid,
                    f"Step {sid} is not specific enough ({issue.description}): what exactly "
                    "should it produce, from which inputs?",
                )
        for step in plan.steps:
            if step.clarity_state in (ClarityState.PARTIALLY_CLEAR, ClarityState.BLOCKED) and (
                step.status is not StepStatus.COMPLETE or step.clarity_state is ClarityState.PARTIALLY_CLEAR
            ):
                state = step.clarity_state.value
                asked.setdefault(
                    step.step_id,
                    f"Step {step.step_id} ('{step.description}') was {state}: what "
                    "information is missing to carry it out?",
                )
        return [
            {"kind": "follow_up_question", "pass_number": pass_number, "step_id": sid, "question": q}
            for sid, q in asked.items()
        ]


def rearm(plan: Plan) -> None:
    """Steps held back only because a dependency was not complete return to pending once refinement has given
    every dependency a way to run (none failed or invalid any more): invalid -> pending (04 PlanStep)."""
    status = {s.step_id: s.status for s in plan.steps}
    for step in plan.steps:
        held = [e for e in step.errors if e.startswith(DEPENDENCY_NOTE)]
        if step.status is not StepStatus.INVALID or not held or len(held) != len(step.errors):
            continue
        if all(status.get(d) in (StepStatus.PENDING, StepStatus.COMPLETE) for d in step.dependencies):
            step.errors = []
            step.transition(StepStatus.PENDING)
