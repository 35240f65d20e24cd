"""Refinement deltas: typed actions applied in place to a Plan, executed steps never touched.

Rules, in one place:
- `apply_actions` edits the given Plan object (identity kept) and returns one `ActionOutcome` per action. It never
  raises for a bad action: a rejected action changes nothing and is kept as an advisory record.
- Executed steps (complete/failed) are immutable; running steps are mid-flight and equally off-limits.
  Only pending and invalid steps are refined; refined steps come back pending with their execution fields cleared.
- The spec asks to "mark conflicting executed steps invalid", which would rewrite an executed step. We read it as a
  report: when `inconsistency_detected` is set, the executed steps named by `semantic_validation_input`
  (`location.step_id`) are listed in `ActionOutcome.contradicts`, unchanged, and only the pending target is refined.
  STEP_MARK_INVALID therefore applies to pending (or already invalid) steps only.
- Step ids are stable: MODIFY/REPLACE keep the target id, ADD needs a fresh one, SUBPLAN_CREATE expands the parent
  in place into `parent.1`, `parent.2`, ... A Subplan deeper than MAX_DEPTH is rejected for manual intervention.
- `step_index`/`total_steps` belong to the plan's order (`Plan.reindex`), so they follow inserts and removals.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Callable, Iterable, Sequence

import msgspec

from aeon.domain.errors import PlanIntegrityError
from aeon.domain.evaluation import ValidationIssue
from aeon.domain.plan import Plan, PlanStep, StepStatus, step_id_problem
from aeon.domain.provenance import TRUSTED

MAX_DEPTH = 5

_REFINABLE = frozenset({StepStatus.PENDING, StepStatus.INVALID})
# Fields the planner authors; the rest are either identity (step_id), position (reindex) or execution results.
_PLANNED: tuple[str, ...] = ("description", "tool", "agent", "args", "dependencies", "provides", "incoming_context")
_PLANNED += ("handoff_to_next", "origin")  # origin: the label of who wrote it (a refinement sets it)


class RefinementActionType(enum.StrEnum):
    ADD = "ADD"
    MODIFY = "MODIFY"
    REMOVE = "REMOVE"
    REPLACE = "REPLACE"
    SUBPLAN_CREATE = "SUBPLAN_CREATE"
    STEP_MARK_INVALID = "STEP_MARK_INVALID"


class Subplan(msgspec.Struct, kw_only=True):
    """A pending step expanded into ordered substeps (04 Subplan). Checked by `problem()`, never on construction,
    so an over-deep subplan can still be recorded and rejected gracefully."""

    parent_step_id: str
    subplan_goal: str
    substeps: list[PlanStep]
    depth_level: int
    created_by: str

    def problem(self) -> str | None:
        if not self.subplan_goal.strip():
            return "subplan goal is empty"
        if not self.substeps:
            return "subplan has no substeps"
        if self.depth_level < 1:
            return f"depth {self.depth_level} is below 1"
        if self.depth_level > MAX_DEPTH:
            return f"depth {self.depth_level} exceeds maximum {MAX_DEPTH}"
        return None


class RefinementAction(msgspec.Struct, kw_only=True):
    """One delta proposed by the refiner (04 RefinementAction). `position_after` places an ADD (None: at the end)."""

    action_type: RefinementActionType
    justification: str
    target_step_id: str | None = None
    new_step: PlanStep | None = None
    semantic_validation_input: list[ValidationIssue] = msgspec.field(default_factory=list)
    inconsistency_detected: bool = False
    position_after: str | None = None
    subplan: Subplan | None = None


class ActionOutcome(msgspec.Struct, kw_only=True):
    """What happened to one action. Rejected actions are advisory records; `contradicts` lists executed steps the
    action's validation input says it contradicts (reported, never modified)."""

    action: RefinementAction
    applied: bool
    reason: str = ""
    advisory: bool = False
    contradicts: list[str] = msgspec.field(default_factory=list)
    manual_intervention: bool = False


class _Rejected(Exception):
    """Internal control flow: raised before any mutation, turned into an advisory outcome."""

    def __init__(self, reason: str, *, manual: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.manual = manual


def apply_actions(plan: Plan, actions: Sequence[RefinementAction]) -> list[ActionOutcome]:
    """Apply `actions` in order to `plan` itself; return one outcome per action. Never raises for a bad action."""
    outcomes: list[ActionOutcome] = []
    for action in actions:
        contradicts = _contradicted(plan, action)
        handler = _HANDLERS.get(action.action_type)
        try:
            if handler is None:
                raise _Rejected(f"unknown action type {action.action_type!r}")
            if not action.justification.strip():
                raise _Rejected("justification is empty")
            handler(plan, action)
        except _Rejected as rejected:
            outcome = ActionOutcome(
                action=action,
                applied=False,
                reason=rejected.reason,
                advisory=True,
                contradicts=contradicts,
                manual_intervention=rejected.manual,
            )
        else:
            plan.reindex()
            outcome = ActionOutcome(action=action, applied=True, contradicts=contradicts)
        outcomes.append(outcome)
    return outcomes


def replay(original: Plan, history: Sequence[ActionOutcome | RefinementAction]) -> Plan:
    """Rebuild a plan from a copy of `original`: outcomes contribute their applied actions, bare actions all apply.

    Raises PlanIntegrityError if an outcome recorded as applied is rejected on replay (wrong original)."""
    plan = copy.deepcopy(original)
    for item in history:
        if isinstance(item, ActionOutcome) and not item.applied:
            continue
        action = item.action if isinstance(item, ActionOutcome) else item
        (outcome,) = apply_actions(plan, [action])
        if isinstance(item, ActionOutcome) and not outcome.applied:
            raise PlanIntegrityError(f"replayed {action.action_type} was rejected: {outcome.reason}")
    return plan


def _add(plan: Plan, action: RefinementAction) -> None:
    new = _new_step(action)
    if not new.step_id:
        raise _Rejected("new step has no step_id")
    if problem := step_id_problem(new.step_id):
        raise _Rejected(problem)
    if any(s.step_id == new.step_id for s in plan.steps):
        raise _Rejected(f"step id {new.step_id} already exists")
    at = len(plan.steps) if action.position_after is None else _position(plan, action.position_after) + 1
    later = next((s for s in plan.steps[at:] if s.executed), None)
    if later is not None:
        raise _Rejected(f"would insert before executed step {later.step_id} ({later.status.value})")
    plan.steps.insert(at, _fresh(new, new.step_id))


def _modify(plan: Plan, action: RefinementAction) -> None:
    """Edit the target object in place (holders of the step see the change); REPLACE swaps in a new object."""
    target = _target(plan, action.target_step_id, action)
    new = _keep_relations(_fresh(_new_step(action), target.step_id), target)
    for name in _PLANNED:
        setattr(target, name, getattr(new, name))
    _clear_execution(target)
    if target.status is StepStatus.INVALID:
        target.transition(StepStatus.PENDING)


def _replace(plan: Plan, action: RefinementAction) -> None:
    target = _target(plan, action.target_step_id, action)
    plan.replace_step(target.step_id, _keep_relations(_fresh(_new_step(action), target.step_id), target))


def _keep_relations(new: PlanStep, old: PlanStep) -> PlanStep:
    """A rewrite that names no dependencies or provides keeps the old ones: relations are preserved."""
    if not new.dependencies:
        new.dependencies = list(old.dependencies)
    if not new.provides:
        new.provides = list(old.provides)
    return new


def _remove(plan: Plan, action: RefinementAction) -> None:
    target = _target(plan, action.target_step_id, action)
    del plan.steps[_position(plan, target.step_id)]
    for step in plan.steps:
        if step.status in _REFINABLE and target.step_id in step.dependencies:
            step.dependencies = [d for d in step.dependencies if d != target.step_id]


def _mark_invalid(plan: Plan, action: RefinementAction) -> None:
    target = _target(plan, action.target_step_id, action)
    if target.status is StepStatus.PENDING:
        target.transition(StepStatus.INVALID)


def _subplan(plan: Plan, action: RefinementAction) -> None:
    """Replace the parent, at its position, by its substeps: chained in order, the first inheriting the parent's
    dependencies, the last its `provides`; pending steps that depended on the parent now depend on the last one."""
    sub = action.subplan
    if sub is None:
        raise _Rejected("SUBPLAN_CREATE needs a subplan")
    if action.target_step_id not in (None, sub.parent_step_id):
        raise _Rejected(f"subplan parent {sub.parent_step_id} differs from target {action.target_step_id}")
    parent = _target(plan, sub.parent_step_id, action)
    problem = sub.problem()
    if problem is not None:
        raise _Rejected(problem, manual=sub.depth_level > MAX_DEPTH)
    pid = parent.step_id
    ids = [s.step_id if s.step_id.startswith(f"{pid}.") else f"{pid}.{i}" for i, s in enumerate(sub.substeps, 1)]
    if len(set(ids)) != len(ids):
        raise _Rejected(f"substep ids repeat: {', '.join(ids)}")
    if problem := next(filter(None, map(step_id_problem, ids)), None):
        raise _Rejected(problem)
    clash = next((i for i in ids if any(s.step_id == i and s is not parent for s in plan.steps)), None)
    if clash is not None:
        raise _Rejected(f"substep id {clash} already exists")
    renamed = {s.step_id: sid for s, sid in zip(sub.substeps, ids, strict=True)}
    substeps: list[PlanStep] = []
    for i, (raw, sid) in enumerate(zip(sub.substeps, ids, strict=True)):
        step = _fresh(raw, sid)
        chain = parent.dependencies if i == 0 else [ids[i - 1]]
        own = (renamed.get(d, d) for d in step.dependencies)
        step.dependencies = _unique(d for d in (*chain, *own) if d not in (sid, pid))
        substeps.append(step)
    substeps[-1].provides = _unique((*substeps[-1].provides, *parent.provides))
    at = _position(plan, pid)
    plan.steps[at : at + 1] = substeps
    for step in plan.steps:
        if step.status in _REFINABLE and pid in step.dependencies:
            step.dependencies = _unique(ids[-1] if d == pid else d for d in step.dependencies)


_HANDLERS: dict[str, Callable[[Plan, RefinementAction], None]] = {
    RefinementActionType.ADD: _add,
    RefinementActionType.MODIFY: _modify,
    RefinementActionType.REPLACE: _replace,
    RefinementActionType.REMOVE: _remove,
    RefinementActionType.STEP_MARK_INVALID: _mark_invalid,
    RefinementActionType.SUBPLAN_CREATE: _subplan,
}


def _target(plan: Plan, step_id: str | None, action: RefinementAction) -> PlanStep:
    if step_id is None:
        raise _Rejected(f"{action.action_type} needs target_step_id")
    step = plan.steps[_position(plan, step_id)]
    if step.executed:
        raise _Rejected(f"targets executed step {step_id} ({step.status.value})")
    if step.status not in _REFINABLE:
        raise _Rejected(f"targets {step.status.value} step {step_id}")
    return step


def _position(plan: Plan, step_id: str) -> int:
    for i, step in enumerate(plan.steps):
        if step.step_id == step_id:
            return i
    raise _Rejected(f"unknown step {step_id}")


def _new_step(action: RefinementAction) -> PlanStep:
    if action.new_step is None:
        raise _Rejected(f"{action.action_type} needs new_step")
    return action.new_step


def _fresh(step: PlanStep, step_id: str) -> PlanStep:
    """A private pending copy: the plan never shares objects with the action that proposed them (replay needs it)."""
    out = copy.deepcopy(step)
    out.step_id = step_id
    out.status = StepStatus.PENDING
    _clear_execution(out)
    return out


def _clear_execution(step: PlanStep) -> None:
    step.errors, step.step_output, step.clarity_state, step.mode = [], None, None, None
    step.output_label = TRUSTED


def _contradicted(plan: Plan, action: RefinementAction) -> list[str]:
    if not action.inconsistency_detected:
        return []
    executed = {s.step_id for s in plan.steps if s.executed}
    named: list[str] = []
    for issue in action.semantic_validation_input:
        step_id = (issue.location or {}).get("step_id")
        if step_id is not None and step_id in executed:
            named.append(step_id)
    return _unique(named)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
