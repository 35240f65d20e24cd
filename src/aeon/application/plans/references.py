"""Arguments passed by reference: `{"$from": "s2"}` or `{"$from": "s2", "path": "iban"}` takes an earlier step's
output (or a field of it: dotted keys and list indexes) as an argument's value, with that step's output label."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aeon.application.schemas import schema_problems
from aeon.domain.plan import Plan, PlanStep, StepStatus
from aeon.domain.provenance import Label
from aeon.domain.tools import ToolSpec

FROM = "$from"


class ReferenceFailed(Exception):
    """A reference that cannot be resolved now: its step did not complete, or its output lacks the path."""


def reference(value: Any) -> tuple[str, str] | None:
    """(step id, path) when `value` is a reference ("" path: the whole output), else None."""
    if not isinstance(value, dict) or FROM not in value or not set(value) <= {FROM, "path"}:
        return None
    source, path = value[FROM], value.get("path", "")
    return (source, path) if isinstance(source, str) and isinstance(path, str) else None


def has_references(args: Mapping[str, Any]) -> bool:
    return any(reference(v) is not None for v in args.values())


def literal_problems(spec: ToolSpec, args: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Schema problems of the literal arguments only: a referenced argument is checked once resolved."""
    refs = {k for k, v in args.items() if reference(v) is not None}
    schema = dict(spec.input_schema)
    if isinstance(required := schema.get("required"), list):
        schema["required"] = [r for r in required if r not in refs]
    return schema_problems({k: v for k, v in args.items() if k not in refs}, schema)


def resolve(plan: Plan, step: PlanStep) -> tuple[dict[str, Any], dict[str, Label]]:
    """The step's arguments with every reference replaced by its value, and the label of each referenced argument.
    Raises ReferenceFailed naming the argument when a source step is not complete or lacks the path."""
    args, labels = dict(step.args), {}
    for name, value in step.args.items():
        if (ref := reference(value)) is None:
            continue
        source_id, path = ref
        source = next((s for s in plan.steps if s.step_id == source_id), None)
        if source is None or source.status is not StepStatus.COMPLETE:
            raise ReferenceFailed(f"argument {name!r} takes the output of step {source_id!r}, which did not complete")
        try:
            args[name] = _walk(source.step_output, path)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise ReferenceFailed(f"argument {name!r}: step {source_id}'s output has no {path!r} ({exc!r})") from exc
        labels[name] = source.output_label
    return args, labels


def _walk(value: Any, path: str) -> Any:
    for part in path.split(".") if path else ():
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def reference_problems(plan: Plan, tools: Mapping[str, ToolSpec]) -> list[tuple[str, str]]:
    """(step id, problem) for each reference to a step not in the plan, to this step or a later one, or to a path
    the source tool's output schema cannot have."""
    position = {s.step_id: i for i, s in enumerate(plan.steps)}
    out: list[tuple[str, str]] = []
    for i, step in enumerate(plan.steps):
        for name, value in step.args.items():
            if (ref := reference(value)) is None:
                continue
            source_id, path = ref
            said = f"argument {name!r} takes $from {source_id!r}"
            if source_id not in position:
                out.append((step.step_id, f"{said}, which is not in the plan"))
            elif position[source_id] >= i:
                out.append((step.step_id, f"{said}, which does not run before it"))
            elif (why := _path_problem(plan.steps[position[source_id]], path, tools)) is not None:
                out.append((step.step_id, f"{said} path {path!r}, which {why}"))
    return out


def _path_problem(source: PlanStep, path: str, tools: Mapping[str, ToolSpec]) -> str | None:
    spec = tools.get(source.tool or "")
    if not path or spec is None:
        return None
    why = impossible(spec.output_schema, path)
    return None if why is None else f"tool {spec.name!r} cannot return: {why}"


def impossible(schema: Mapping[str, Any], path: str) -> str | None:
    """Why no value matching `schema` can have `path`, or None when it may (an open or unknown schema may)."""
    for part in path.split("."):
        kind = schema.get("type")
        props = schema.get("properties")
        if isinstance(props, dict) and part in props:
            schema = props[part]
        elif kind == "array" or "items" in schema:
            if not part.isdigit():
                return f"{part!r} is not a list index"
            items = schema.get("items")
            schema = items if isinstance(items, dict) else {}
        elif kind == "object" or isinstance(props, dict):
            if schema.get("additionalProperties") is False:
                return f"no field {part!r}"
            extra = schema.get("additionalProperties")
            schema = extra if isinstance(extra, dict) else {}
        elif isinstance(kind, str):
            return f"a {kind} has no {part!r}"
        else:
            return None  # an unknown or composed schema: anything may be there
    return None
