"""What a plan's steps answered: a step's status and output (a recorded result wins) and the plan's final answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aeon.domain.history import StepResult
from aeon.domain.plan import Plan, PlanStep, StepStatus
from aeon.domain.provenance import TRUSTED, Label


def result_of(step: PlanStep, results: Mapping[str, Any] | None) -> tuple[str, Any]:
    """(status, output) of a step; an entry of `results` ({status, output, …} or a bare output) wins."""
    status, output = step.status.value, step.step_output
    if results is not None and step.step_id in results:
        entry = results[step.step_id]
        if isinstance(entry, StepResult):
            status, output = entry.status.value, entry.output
        elif isinstance(entry, Mapping) and "output" in entry:
            status, output = str(entry.get("status") or status), entry["output"]
        else:
            output = entry
    return status, output


def final_answer(plan: Plan, results: Mapping[str, Any] | None = None) -> str | None:
    """str() of the output of the last complete step, or None when no step has completed."""
    answer = None
    for step in plan.steps:
        status, output = result_of(step, results)
        if status == StepStatus.COMPLETE:
            answer = "" if output is None else str(output)
    return answer


def answer_label(plan: Plan) -> Label:
    """The label of the final answer: that of the last complete step's output (the step final_answer quotes)."""
    done = [step for step in plan.steps if step.status is StepStatus.COMPLETE]
    return done[-1].output_label if done else TRUSTED
