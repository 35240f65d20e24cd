"""The tools `aeon mcp` serves, as an MCP client sees them: argument models (pydantic, the human edge), input and
output schemas, descriptions written for the client's model, and the short text that goes with each result."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aeon.adapters.documents import MAX_DOCUMENT_BYTES, parse_json
from aeon.adapters.durable.rows import RunRow, run_lines
from aeon.application.errors import InputError
from aeon.application.plans.validation import MAX_PLAN_STEPS, plan_schema
from aeon.application.results import RunResult
from aeon.application.views.mcp import object_schema
from aeon.domain.tools import ToolSpec
from aeon.entrypoints.render import render_result

# a run's own statuses (RunStatus), then a durable run's that the kernel did not end: cut off, waiting, or ended
# by DBOS (see `aeon runs --help`)
Listed = Literal[
    "completed",
    "ttl_expired",
    "error",
    "interrupted",
    "unverified",
    "awaiting_approval",
    "approval_expired",
    "denied",
    "running",
    "pending",
    "queued",
    "stopped",
    "failed",
    "cancelled",
]
MOST_RUNS = 1000  # the newest runs the runs tool looks through


class ToolArguments(BaseModel):
    """A tool's arguments: nothing unknown, and a value never quoted back in an error (it may hold a key)."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)


class RunArgs(ToolArguments):
    request: str = Field(description="What you want done, in plain language, e.g. 'calculate the sum of 5 and 10'.")
    plan: dict[str, Any] | None = Field(
        None,
        description="Optional: run this plan as written instead of letting Aeon's model plan. Each step calls a tool "
        "with args, or has agent 'llm' to reason in words; steps run in order. Check it first with validate.",
    )
    ttl: int | None = Field(
        None, ge=0, description="Most passes of plan → execute → evaluate → refine; the server's config caps it."
    )
    max_llm_calls: int | None = Field(
        None, ge=0, description="Most LLM calls for the whole run; the server's config caps it."
    )
    durable: bool | None = Field(
        None,
        description="Record the run so that it survives a crash and resume can finish it (default: the server's "
        "config, durable.enabled).",
    )


class ValidateArgs(ToolArguments):
    plan: dict[str, Any] = Field(description="The plan to check, as the run tool takes it.")


class RunsArgs(ToolArguments):
    status: Listed | None = Field(None, description="Only runs with this status (default: all).")
    limit: int = Field(20, ge=1, le=MOST_RUNS, description="Most runs to list, newest first.")


class ResumeArgs(ToolArguments):
    run_id: str = Field(min_length=1, description="The id of a durable run, as the runs tool lists it.")


def arguments(model: type[ToolArguments], given: dict[str, Any] | None, tool: str) -> Any:
    """The call's arguments as `model`, or InputError naming every argument that does not fit, in one line."""
    try:
        return model.model_validate(given or {})
    except ValidationError as exc:
        wrong = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
        raise InputError(f"bad arguments for {tool}: {wrong}") from None


def plan_document(plan: dict[str, Any]) -> Any:
    """A plan given as an argument, held to the bounds of a plan file: size, nesting, text that encodes."""
    text = json.dumps(plan)
    if len(text.encode()) > MAX_DOCUMENT_BYTES:
        raise InputError(f"the plan argument is larger than {MAX_DOCUMENT_BYTES >> 20} MiB, the most Aeon reads")
    return parse_json(text, source="the plan argument")


def input_schema(model: type[ToolArguments], specs: Sequence[ToolSpec]) -> dict[str, Any]:
    """The model's JSON schema, its plan argument (if any) spelled out as the plan schema naming the tools it may
    call (an optional plan is left out, not null)."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema["properties"].values():
        prop.pop("title", None)
    if "plan" in schema["properties"]:
        shape = plan_schema([s.name for s in specs], max_steps=MAX_PLAN_STEPS)
        schema["properties"]["plan"] = {"description": schema["properties"]["plan"]["description"], **shape}
    return schema


RUNS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"runs": {"type": "array", "items": object_schema(RunRow)}},
    "required": ["runs"],
}


def result_text(result: RunResult) -> str:
    """What `aeon run` prints for the result: the plan's steps and outputs, the status line, the answer."""
    text = io.StringIO()
    render_result(result, text)
    if result.error is not None:
        text.write(f"error {result.error.code}: {result.error.message}\n")
    return text.getvalue().strip()


def runs_text(rows: list[RunRow]) -> str:
    return "\n".join(run_lines(rows)) if rows else "no durable runs recorded yet"
