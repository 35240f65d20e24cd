"""The arguments of `aeon mcp`'s tools as a client sends them: models (pydantic, the human edge) that take nothing
unknown, the one-line error naming every argument that does not fit, and the input schemas a client is shown."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aeon.application.errors import InputError

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


def input_schema(model: type[ToolArguments], plan: dict[str, Any]) -> dict[str, Any]:
    """The model's JSON schema, its plan argument (if any) spelled out as `plan`, the plan schema naming the tools
    it may call (an optional plan is left out, not null)."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema["properties"].values():
        prop.pop("title", None)
    if "plan" in schema["properties"]:
        schema["properties"]["plan"] = {"description": schema["properties"]["plan"]["description"], **plan}
    return schema
