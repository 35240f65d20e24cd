"""Lax reading of a plan answer (pydantic's lax mode): shapes whose content is all there, fixed without an LLM call.

A model may wrap the plan in one outer key (`{"plan": {...}}`), number its steps (`"step_id": 1`) or write tool
arguments as JSON text (`"args": "{\\"expression\\": \\"5+10\\"}"`). Nothing is invented or dropped: a value that
does not convert cleanly is left as it was, for the structural check to report.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Json, ValidationError


class _LaxStep(BaseModel):
    """The step fields worth coercing; everything else passes through untouched."""

    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True)

    step_id: str | None = None
    args: dict[str, Any] | Json[dict[str, Any]] | None = None
    dependencies: list[str] | None = None
    provides: list[str] | None = None


class Coerced:
    __slots__ = ("changes", "value")

    def __init__(self, value: Any, changes: list[str]) -> None:
        self.value = value
        self.changes = changes  # what was done, for the supervisor's log line


def coerce_plan(obj: Any) -> Coerced | None:
    """The plan answer with lax coercions applied, or None when there was nothing to coerce."""
    changes: list[str] = []
    if isinstance(obj, dict) and "steps" not in obj and len(obj) == 1:
        ((key, inner),) = obj.items()
        if isinstance(inner, dict) and "steps" in inner:
            obj = inner
            changes.append(f"unwrapped the outer {key!r} key")
    steps = obj.get("steps") if isinstance(obj, dict) else None
    if isinstance(steps, list):
        coerced_steps: list[Any] = []
        fields: set[str] = set()
        for step in steps:
            new = _coerce_step(step)
            fields.update(k for k in new if isinstance(step, dict) and new[k] != step.get(k))
            coerced_steps.append(new)
        if fields:
            obj = {**obj, "steps": coerced_steps}
            changes.append(f"coerced {', '.join(sorted(fields))} to the types the plan schema asks for")
    return Coerced(obj, changes) if changes else None


def _coerce_step(step: Any) -> Any:
    if not isinstance(step, dict):
        return step
    try:
        lax = _LaxStep.model_validate(step)
    except ValidationError:
        return step
    return {**step, **lax.model_dump(exclude_unset=True)}
