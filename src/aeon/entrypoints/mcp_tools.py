"""What `aeon mcp`'s tools take and give beside their arguments (application/views/mcp_arguments.py): a plan
argument held to the bounds of a plan file, the schema of the runs listed, and the short text with each result."""

from __future__ import annotations

import io
import json
from typing import Any

from aeon.adapters.documents import MAX_DOCUMENT_BYTES, parse_json
from aeon.adapters.durable.rows import RunRow, run_lines
from aeon.application.errors import InputError
from aeon.application.results import RunResult
from aeon.application.views.mcp import object_schema
from aeon.entrypoints.render import render_result


def plan_document(plan: dict[str, Any]) -> Any:
    """A plan given as an argument, held to the bounds of a plan file: size, nesting, text that encodes."""
    text = json.dumps(plan)
    if len(text.encode()) > MAX_DOCUMENT_BYTES:
        raise InputError(f"the plan argument is larger than {MAX_DOCUMENT_BYTES >> 20} MiB, the most Aeon reads")
    return parse_json(text, source="the plan argument")


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
