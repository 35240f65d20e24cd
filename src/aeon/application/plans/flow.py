"""The policy on the plan itself, before anything runs: the label each step's output will have, computed from the
plan's data flow (a `$from` reference carries its source step's label), and the steps whose consequential call the
policy would send for approval — so a run asks (or refuses) before the first tool call of a pass, and `aeon validate`
warns. The check before each call (kernel/approvals.py) still holds: this one only brings the question forward."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from aeon.application.plans.references import reference
from aeon.application.policy import NeedsApproval, Policy, decide
from aeon.domain.plan import Plan, PlanStep, StepStatus
from aeon.domain.provenance import TRUSTED, Label
from aeon.domain.tools import ToolSpec

SpecOf = Callable[[PlanStep], "ToolSpec | None"]  # the tool a step calls, None for an LLM step or a missing tool


class Flow(msgspec.Struct, frozen=True, kw_only=True):
    """An argument whose value a `$from` reference takes from step `source`, with the label it will carry."""

    arg: str
    source: str
    label: Label


class Flagged(msgspec.Struct, frozen=True, kw_only=True):
    """A pending step the policy would not let call its tool without consent: why, and the untrusted flows in."""

    step: PlanStep
    asks: NeedsApproval
    flows: tuple[Flow, ...] = ()


def flow_labels(plan: Plan, spec_of: SpecOf, policy: Policy, seen: Label = TRUSTED) -> dict[str, Label]:
    """The label each step's output will have: a step that ran keeps its own; a pending tool step gets its tool's;
    an LLM step (or a step whose tool is missing, which falls back to one) the join of all the run held before it
    (`seen`) and of every earlier step's output, as its prompt will."""
    labels: dict[str, Label] = {}
    before = seen
    for step in plan.steps:
        spec = spec_of(step) if step.status is StepStatus.PENDING and step.tool is not None else None
        if step.status is not StepStatus.PENDING:
            label = step.output_label
        elif spec is not None:
            label = policy.output_label(spec)
        else:
            label = before.join(step.origin)
        labels[step.step_id] = label
        before = before.join(label)
    return labels


def flagged(plan: Plan, spec_of: SpecOf, policy: Policy, seen: Label = TRUSTED) -> list[Flagged]:
    """The pending tool steps the policy would send for approval, given the plan's data flow, in plan order."""
    if not policy.enabled:
        return []
    labels = flow_labels(plan, spec_of, policy, seen)
    out = []
    for step in plan.steps:
        spec = spec_of(step) if step.status is StepStatus.PENDING and step.tool is not None else None
        if spec is None:
            continue
        flows = tuple(
            Flow(arg=name, source=ref[0], label=labels.get(ref[0], TRUSTED))
            for name, value in step.args.items()
            if (ref := reference(value)) is not None
        )
        verdict = decide(step, spec, {f.arg: f.label for f in flows}, policy)
        if isinstance(verdict, NeedsApproval):
            rule = policy.tools.get(spec.name)
            relaxed = rule.args if rule is not None else {}
            tainted = tuple(f for f in flows if not f.label.trusted and relaxed.get(f.arg) != "any")
            out.append(Flagged(step=step, asks=verdict, flows=tainted))
    return out


def warning_lines(found: list[Flagged]) -> list[str]:
    """One line per flagged step and argument, as `aeon validate` prints them: the step, the argument, the source."""
    lines = []
    for flag in found:
        sid, tool = flag.step.step_id, flag.step.tool
        if not flag.step.origin.trusted:
            lines.append(f"step {sid}: written from {flag.step.origin.shown()}, calls tool {tool!r}: needs approval")
        for flow in flag.flows:
            said = f"argument {flow.arg!r} of tool {tool!r} takes $from {flow.source!r}, {flow.label.shown()}"
            lines.append(f"step {sid}: {said}: needs approval")
    return lines
