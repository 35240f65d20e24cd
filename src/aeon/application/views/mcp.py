"""What `aeon mcp`'s tools say to an MCP client: their descriptions for the client's model, the schemas of what they
return, and the short text that goes with a plan check."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import msgspec

from aeon.application.results import RunResult, RunStatus
from aeon.application.views.tools import tool_rows
from aeon.domain.text import terminal_safe
from aeon.domain.tools import ToolSpec

RUN_STATUSES = tuple(s.value for s in RunStatus)


def object_schema(struct: type, *, drop: Sequence[str] = ()) -> dict[str, Any]:
    """A msgspec Struct's JSON schema as a top-level object with its own $defs, fields in `drop` left out and the
    definitions only they used pruned."""
    (_,), defs = msgspec.json.schema_components([struct], ref_template="#/$defs/{name}")
    top = dict(defs.pop(struct.__name__))
    top["properties"] = {k: v for k, v in top["properties"].items() if k not in drop}
    used: set[str] = set()
    pending = [top]
    while pending:
        text = json.dumps(pending.pop())
        for name in defs:
            if name not in used and f'"#/$defs/{name}"' in text:
                used.add(name)
                pending.append(defs[name])
    return {**top, "$defs": {name: defs[name] for name in sorted(used)}} if used else top


RESULT_SCHEMA = object_schema(RunResult, drop=("history",))
VALIDATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"valid": {"type": "boolean"}, "problems": {"type": "array", "items": {"type": "string"}}},
    "required": ["valid", "problems"],
}


def tools_table(specs: Sequence[ToolSpec]) -> str:
    """The tools a plan may call, as `aeon tools` lists them."""
    return "".join(terminal_safe(row) + "\n" for row in tool_rows(specs))


def descriptions(specs: Sequence[ToolSpec]) -> dict[str, str]:
    """What each tool does, for the client's model; the run and validate tools list the tools a plan may call."""
    tools = tools_table(specs)
    statuses = ", ".join(RUN_STATUSES)
    return {
        "run": "Run a request through Aeon: it plans the work as steps (tool calls and LLM reasoning), executes them "
        "in order, checks the answer and refines the plan until it converges or a budget runs out. Returns the "
        f"structured result: status ({statuses}), each step's output, the answer, budget spent and the run id. "
        "A run that stops early (ttl_expired) or fails (error) is still a result: read its status. A tool call "
        "that needs a person's approval leaves the run waiting on the record (status awaiting_approval, the call in "
        "pending_approval) until a person runs `aeon approve RUN_ID` or `aeon deny RUN_ID --reason …`; then resume "
        "returns its result. "
        f"Tools a plan may call:\n{tools}",
        "validate": "Check a plan without running it: every problem a run would find (structure, unknown tools, "
        "arguments that do not fit a tool's schema, dependencies), each with its step id. Returns valid and the "
        f"problems. Tools a plan may call:\n{tools}",
        "runs": "List the durable runs recorded in Aeon's database, newest first: id, request, status, passes, "
        "LLM calls, tokens, start and duration. A run cut off by a crash shows status pending: resume finishes it.",
        "resume": "Finish an interrupted durable run (status pending, queued or cancelled): the LLM and tool calls "
        "already recorded are not made again. A finished run returns its recorded result. Returns the same result "
        "as run.",
    }


def problems_text(problems: Sequence[str]) -> str:
    return "valid" if not problems else "\n".join([f"{len(problems)} problem(s):", *problems])
