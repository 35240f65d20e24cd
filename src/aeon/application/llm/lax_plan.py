"""Lax reading of a plan answer (pydantic's lax mode): shapes whose content is all there, fixed without an LLM call.

A model may write the plan as JSON text, wrap it in one outer key (`{"plan": {...}}`), give a one-step plan's
`steps` as that step's object, number its steps (`"step_id": 1`) or write tool arguments as JSON text
(`"args": "{\\"expression\\": \\"5+10\\"}"`). Given the registered tools, a step's call is also read as models
write it (step_calls: key synonyms, printed tool names, bare arguments), and taken only when the step can then be
called as written. Nothing is invented or dropped: a value that does not convert cleanly is left as it was, for
the structural check to report.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Json, ValidationError

from aeon.application.llm.step_calls import ARGS_KEYS, TOOL_KEYS, canonical_keys, registered_call
from aeon.application.schemas import args_problems
from aeon.domain.tools import ToolSpec

_STEP_KEYS = frozenset({"step_id", "description", "tool", "args", "agent", *TOOL_KEYS, *ARGS_KEYS})


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


def coerce_plan(obj: Any, tools: Mapping[str, ToolSpec] | None = None) -> Coerced | None:
    """The plan answer with lax coercions applied, or None when there was nothing to coerce."""
    changes: list[str] = []
    if isinstance(obj, str) and obj.strip().startswith("{"):
        try:
            obj = json.loads(obj)
            changes.append("decoded the plan from the JSON string it was written as")
        except ValueError:
            return None
    if isinstance(obj, dict) and "steps" not in obj and len(obj) == 1:
        ((key, inner),) = obj.items()
        if isinstance(inner, dict) and "steps" in inner:
            obj = inner
            changes.append(f"unwrapped the outer {key!r} key")
    steps = obj.get("steps") if isinstance(obj, dict) else None
    if isinstance(steps, dict) and _STEP_KEYS & set(steps):
        obj, steps = {**obj, "steps": [steps]}, [steps]
        changes.append("read 'steps', given as one step's object, as a list of that step")
    if isinstance(steps, list):
        coerced_steps: list[Any] = []
        fields: set[str] = set()
        for step in steps:
            new = _coerce_step(step)
            fields.update(k for k in new if isinstance(step, dict) and new[k] != step.get(k))
            called = _called(step, new, tools) if tools is not None else None
            if called is not None:
                new = called[0]
                changes += called[1]
            coerced_steps.append(new)
        if fields:
            changes.append(f"coerced {', '.join(sorted(fields))} to the types the plan schema asks for")
        if coerced_steps != steps:
            obj = {**obj, "steps": coerced_steps}
    return Coerced(obj, changes) if changes else None


def _called(step: Any, typed: Any, tools: Mapping[str, ToolSpec]) -> tuple[dict[str, Any], list[str]] | None:
    """`step` (`typed`: with its types coerced) read as a call of a registered tool with arguments that fit, and
    what was read how; None when it needs nothing of the kind, or when the reading still leaves it uncallable (the
    LLM repair then sees it as the model wrote it)."""
    if not isinstance(step, dict):
        return None
    named, renamed = canonical_keys(step)
    called, changes = registered_call(_coerce_step(named) if renamed else typed, tools)
    changes = renamed + changes
    spec = tools.get(called["tool"]) if isinstance(called.get("tool"), str) else None
    args = called.get("args") or {}
    if not changes or spec is None or not isinstance(args, dict) or args_problems(spec, args):
        return None
    sid = step.get("step_id")
    return called, [f"step {sid if isinstance(sid, str | int) else '?'}: {change}" for change in changes]


def _coerce_step(step: Any) -> Any:
    """`step` with each field that converts cleanly converted (a field that does not is left for the check)."""
    if not isinstance(step, dict):
        return step
    try:
        lax = _LaxStep.model_validate(step)
    except ValidationError as exc:
        bad = {str(e["loc"][0]) for e in exc.errors() if e["loc"]}
        try:
            lax = _LaxStep.model_validate({k: v for k, v in step.items() if k not in bad})
        except ValidationError:
            return step
    return {**step, **lax.model_dump(exclude_unset=True)}
