"""Arguments a person edits on a call that waits for approval, checked as a plan's are: a `{"$from": …}` reference
is a reference, not an object for the schema — to a step in the plan that runs before this one, with a path its
tool's output can have (what `aeon validate` checks); when that step has completed, the value it gives is checked
against the tool's schema as the call will be."""

from __future__ import annotations

from typing import Any

import msgspec

from aeon.application.plans.references import (
    ReferenceFailed,
    has_references,
    reference,
    reference_problems,
    resolve,
)
from aeon.application.plans.validation import args_problems
from aeon.application.ports import ToolPort
from aeon.application.schemas import schema_problem
from aeon.domain.plan import Plan, StepStatus


def edited_problem(tools: ToolPort, tool: str, step_id: str, args: dict[str, Any], plan: Plan | None) -> str | None:
    """Why edited `args` for `step_id`'s call of `tool` do not fit, or None. `plan`: the run's plan as it waits
    (None when the record has none: then a reference cannot be checked and is refused)."""
    if not has_references(args):
        return schema_problem(tools, tool, args)
    spec = tools.get(tool)
    if spec is None:
        return f"tool {tool!r} is not registered"
    step = next((s for s in plan.steps if s.step_id == step_id), None) if plan is not None else None
    if plan is None or step is None:
        return "a $from reference needs the run's plan, and the record holds none for this call"
    edited = msgspec.structs.replace(step, args=dict(args))
    steps = [edited if s is step else s for s in plan.steps]
    whole = msgspec.structs.replace(plan, steps=steps)
    wrong = [p for sid, p in reference_problems(whole, {t.name: t for t in tools.list()}) if sid == step_id]
    if wrong:
        return "; ".join(wrong)
    if not _sources_done(whole, args):  # asked before the pass: the values are checked right before the call
        return "; ".join(args_problems(spec, args)) or None
    try:
        resolved, _ = resolve(whole, edited)
    except ReferenceFailed as exc:
        return str(exc)
    problem = schema_problem(tools, tool, resolved)
    return None if problem is None else f"once its references are resolved: {problem}"


def _sources_done(plan: Plan, args: dict[str, Any]) -> bool:
    done = {s.step_id for s in plan.steps if s.status is StepStatus.COMPLETE}
    return all(ref[0] in done for v in args.values() if (ref := reference(v)) is not None)
