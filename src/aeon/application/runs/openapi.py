"""The OpenAPI document of `aeon serve`, written from what each route group declares (`Operation`s: method, path,
the pydantic model of its body and of each answer) and the run options the server's config lets a client set."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec
from pydantic import BaseModel, ConfigDict, Field, create_model

from aeon.application.runs.serving import CLIENT_OPTIONS, ServeSettings

OPENAPI = "3.1.0"
API_VERSION = "1"  # the HTTP API's own version: it changes when an answer or a body changes shape
_OPTION_TYPES: dict[str, Any] = {"ttl": int, "max_llm_calls": int, "max_cost": float, "max_seconds": float,
                                 "max_tokens": int, "evaluate": bool}  # fmt: skip


class Problem(BaseModel):
    code: str = Field(description="AEON.INPUT, AEON.APPROVAL.DECIDED …")
    message: str


class Error(BaseModel):
    """What a refused request is told (400, 404, 409): one line."""

    error: Problem


class Queued(BaseModel):
    run_id: str
    status: Literal["queued"]


class Awaiting(BaseModel):
    """The tool call a run waits on a person's decision for."""

    step_id: str
    tool: str
    args: dict[str, Any]
    description: str
    reason: str | None


class Run(BaseModel):
    """A run: its status as `aeon runs` says it, and once it ended its result as `aeon run --json` prints it."""

    run_id: str
    status: str = Field(description="queued, running, awaiting_approval, completed, failed, cancelled …")
    request: str
    started: str
    awaiting: Awaiting | None
    result: dict[str, Any] | None
    error: Problem | None = Field(
        None, description="why a run with no result stopped: AEON.DURABLE.UNSAFE_TOOL_IN_FLIGHT"
    )


class RunPage(BaseModel):
    runs: list[Run]
    next: str | None = Field(description="the cursor of the next page (GET /runs?cursor=…), null: no more")


class Decision(BaseModel):
    """A person's decision on the call a run waits on: approve (as asked, or with edited `args`) or deny (`reason`)."""

    model_config = ConfigDict(extra="forbid")
    verdict: Literal["approve", "deny"]
    args: dict[str, Any] | None = None
    reason: str | None = None
    by: str | None = Field(None, description="who decides, for the record")


def run_request(options: Iterable[str]) -> type[BaseModel]:
    """The body of POST /runs: the request and the run options the server lets a client set (nothing else)."""
    fields: dict[str, Any] = {"request": (str, Field(description="what you want done"))}
    fields |= {name: (_OPTION_TYPES[name] | None, None) for name in CLIENT_OPTIONS if name in set(options)}
    model = create_model("RunRequest", __config__=ConfigDict(extra="forbid"), **fields)
    model.__doc__ = "A run to queue. Any other field is refused (400): never tools, the model, its address or key."
    return model


Answers = dict[int, type[Any] | None]  # a pydantic model or a msgspec Struct


@dataclass(frozen=True)
class Operation:
    """One route as the document shows it: `answers` by status code (None: no body, or server-sent events)."""

    method: str
    path: str
    summary: str
    body: type[BaseModel] | None = None
    answers: Answers = field(default_factory=dict)
    query: Sequence[str] = ()
    stream: bool = False


def runs_operations(serve: ServeSettings) -> list[Operation]:
    """The runs API (entrypoints/serve/runs.py)."""
    run: Answers = {202: Run, 400: Error, 404: Error}
    refused: Answers = {400: Error}
    one: Answers = {200: Run, 404: Error}
    return [
        Operation("POST", "/runs", "Queue a run", run_request(serve.options), {202: Queued, **refused}),
        Operation("GET", "/runs", "Runs, newest first", None, {200: RunPage, **refused}, ("status", "limit", "cursor")),
        Operation("GET", "/runs/{run_id}", "A run: its status, and its result once it ended", None, one),
        Operation("POST", "/runs/{run_id}/cancel", "Cancel a run", None, run),
        Operation("POST", "/runs/{run_id}/decisions", "Approve or deny the call a run waits on", Decision, run),
    ]


def document(operations: Iterable[Operation]) -> dict[str, Any]:
    """The OpenAPI document of `operations`, every model among its components."""
    paths: dict[str, dict[str, Any]] = {}
    models: dict[str, type[Any]] = {}
    for op in operations:
        entry: dict[str, Any] = {"summary": op.summary, "responses": {}}
        if op.query:
            entry["parameters"] = [{"name": q, "in": "query", "required": False, "schema": {"type": "string"}}
                                   for q in op.query]  # fmt: skip
        if op.body is not None:
            models[op.body.__name__] = op.body
            entry["requestBody"] = {"required": True, "content": _json(op.body)}
        for status, model in sorted(op.answers.items()):
            answer: dict[str, Any] = {"description": model.__name__ if model else "no body"}
            if model is not None:
                models[model.__name__] = model
                answer["content"] = _json(model)
            entry["responses"][str(status)] = answer
        if op.stream:
            entry["responses"]["200"] = {"description": "server-sent events: one per audit record, id = its seq",
                                         "content": {"text/event-stream": {"schema": {"type": "string"}}}}  # fmt: skip
        paths.setdefault(op.path, {})[op.method.lower()] = entry
    return {
        "openapi": OPENAPI,
        "info": {"title": "Aeon", "version": API_VERSION, "description": "aeon serve: durable runs over HTTP"},
        "components": {"schemas": _schemas(models.values()), "securitySchemes": _BEARER},
        "security": [{"bearer": []}],
        "paths": paths,
    }


_BEARER = {"bearer": {"type": "http", "scheme": "bearer", "description": "needed off loopback: aeon serve token add"}}


def _json(model: type[Any]) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}


def _schemas(models: Iterable[type[Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    structs = [m for m in models if not issubclass(m, BaseModel)]
    for model in models:
        if issubclass(model, BaseModel):
            schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
            found.update(schema.pop("$defs", {}))
            found[model.__name__] = schema
    if structs:
        _, components = msgspec.json.schema_components(structs, ref_template="#/components/schemas/{name}")
        found.update(components)
    return dict(sorted(found.items()))
