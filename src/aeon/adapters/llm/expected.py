"""What a scripted model's next answer must be: which answer the run asks for, and a short JSON example of it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from aeon.domain.llm import JSON_REPAIR_OPENINGS, Message

# By the schema name each call of the kernel sends (the supervisor's targets, the executor's, the step repair's).
_KINDS = {
    "profile_and_plan": "the task profile and plan",
    "task_profile": "a revised task profile",
    "plan": "the plan",
    "evaluation": "the evaluation of the pass",
    "refinement": "the refinement of the plan",
    "step": "a repaired tool step",
    "step_result": "the answer of a reasoning step",
}
# What the script's author may not know: which setting decides whether the answer is asked for at all.
_NOTES = {
    "profile_and_plan": " (a run that evaluates asks for both first; with run.evaluate: false, the plan alone)",
    "evaluation": " (one after each pass; run.evaluate: false asks for none)",
}
_TOOL_CALL = ("tool", "args")  # shown in an example step although optional: most scripts' steps call a tool
_MAX_EXAMPLE = 400
_MAX_DEPTH = 6


def _example(schema: Any, depth: int = 0) -> Any:
    """The smallest value of `schema`'s shape: required keys (and a step's tool and args), one item where one is
    needed, the first of an enum, a number at its top (a judgement that passes), an integer at its bottom."""
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return "…"
    if enum := schema.get("enum"):
        return enum[0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        keys = [*schema.get("required", ()), *(k for k in _TOOL_CALL if k in props)]
        return {key: _example(props.get(key), depth + 1) for key in dict.fromkeys(keys)}
    if kind == "array":
        return [_example(schema.get("items"), depth + 1)] if schema.get("minItems", 0) else []
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return schema.get("maximum", schema.get("minimum", 0))
    if kind == "boolean":
        return True
    return "…"


def calls(n: int) -> str:
    return f"{n} call" if n == 1 else f"{n} calls"


def answer_shape(schema: Mapping[str, Any] | None) -> str:
    """A short JSON example of an answer under `schema` (clipped), or a note that any text will do."""
    if schema is None:
        return "any text"
    text = json.dumps(_example(schema), ensure_ascii=False)
    return text if len(text) <= _MAX_EXAMPLE else text[: _MAX_EXAMPLE - 1] + "…"


def expected_answer(
    number: int, messages: Sequence[Message], schema_name: str, schema: Mapping[str, Any] | None
) -> str:
    """`call N asks for <which answer>, shaped like <JSON example>`: what the script lacks, in one line. A JSON
    repair call means the answer before it did not fit: that one is named, with the shape it should have had."""
    kind = _KINDS.get(schema_name, f"an answer named {schema_name!r}")
    prompt = messages[-1].content if messages else ""
    shape = answer_shape(schema)
    if prompt.startswith(JSON_REPAIR_OPENINGS):
        return (
            f"call {number} asks to repair answer {number - 1}, {kind}, which did not fit its schema: "
            f"answer {number - 1} should be shaped like {shape}"
        )
    return f"call {number} asks for {kind}{_NOTES.get(schema_name, '')}, shaped like {shape}"
