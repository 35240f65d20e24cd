"""`aeon serve`'s AG-UI door: POST /agui with the protocol's RunAgentInput starts a run of the last user message and
streams its events as AG-UI server-sent events (application/views/agui.py maps them; each is checked against
ag-ui-protocol's own types and encoded by its EventEncoder)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from ag_ui.core import Event, RunAgentInput
from ag_ui.encoder import EventEncoder
from pydantic import TypeAdapter, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from aeon.application.errors import UsageError
from aeon.application.results import RunEnded
from aeon.application.runs.answers import answer
from aeon.application.views.agui import AguiEvents, AguiRecords
from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Verdict
from aeon.domain.errors import AeonError
from aeon.domain.progress import ApprovalRequested, ProgressEvent
from aeon.entrypoints.serve.held import Held

Events = AsyncIterator[ProgressEvent | RunEnded]
Source = Callable[[str, str | None], Events]  # a run's events for a request in a thread (entrypoints/serve/a2a_door.py)
# RunEvents.look (application/views/run_resource.py): whether the run ended, and its records past a seq (None: no run)
Look = Callable[[str, int], tuple[bool, list[dict[str, Any]]] | None]
_EVENT: TypeAdapter[Any] = TypeAdapter(Event)
EVERY = 0.25  # seconds between looks at a recorded run that goes on


def request_of(given: RunAgentInput) -> str | None:
    """What the run is asked: the last user message's text (its text parts, for multimodal content)."""
    for message in reversed(given.messages):
        if message.role == "user":
            content = message.content
            if isinstance(content, str):
                return content
            return "\n".join(str(getattr(part, "text", "")) for part in content if getattr(part, "text", None))
    return None


Paused = Held[tuple[AguiEvents, ApprovalRequest]]  # by interrupt id: the run's view and the call it waits on


async def agui_stream(view: AguiEvents, events: Events, paused: Paused) -> AsyncIterator[str]:
    """`events` as AG-UI server-sent events: RUN_STARTED first, every event validated, RUN_ERROR when the run could
    not start (its one-line cause). A call that waits for a person ends the stream with an interrupt, the run kept in
    `paused` for the input that resumes it; otherwise the stream closed (the client gone) stops the run."""
    encoder = EventEncoder()
    for first in view.started():
        yield encoder.encode(_EVENT.validate_python(first))
    kept = False
    try:
        async for event in events:
            for mapped in view.of(event):
                yield encoder.encode(_EVENT.validate_python(mapped))
            if isinstance(event, ApprovalRequested):
                await paused.keep(view.interrupt_id(event.request), events, (view, event.request))
                kept = True
                yield encoder.encode(_EVENT.validate_python(view.interrupted(event.request)))
                return
    except AeonError as exc:
        failed = {"type": "RUN_ERROR", "message": str(exc), "code": getattr(exc, "code", "AEON")}
        yield encoder.encode(_EVENT.validate_python(failed))
    finally:
        if not kept:
            await events.aclose()  # type: ignore[attr-defined]


def _resumed(given: RunAgentInput, paused: Paused) -> tuple[Events, AguiEvents] | None:
    """The run `given.resume` answers, answered: approved when resolved with {"approved": true}, else denied."""
    entry = given.resume[0] if given.resume else None
    waiting = paused.take(entry.interrupt_id) if entry is not None else None
    if entry is None or waiting is None:
        return None
    events, (view, request) = waiting
    payload = entry.payload if isinstance(entry.payload, dict) else {}
    approved = entry.status == "resolved" and payload.get("approved") is True
    reason = (
        None if approved else str(payload.get("reason") or ("cancelled" if entry.status == "cancelled" else "denied"))
    )
    decision = ApprovalDecision(verdict=Verdict.APPROVE if approved else Verdict.DENY, by="ag-ui", reason=reason)
    with contextlib.suppress(UsageError):  # no longer waiting (timed out): the run says how it ended
        answer(request, decision)
    view.run_id = given.run_id  # the resumed part is a run of its own for the client
    return events, view


def agui_routes(source: Source) -> list[BaseRoute]:
    paused: Paused = Held()

    async def start(request: Request) -> Response:
        try:
            given = RunAgentInput.model_validate_json(await request.body())
        except ValidationError as exc:
            return JSONResponse({"error": f"not an AG-UI RunAgentInput: {_first(exc)}"}, 422)
        if given.resume:
            waiting = _resumed(given, paused)
            if waiting is None:
                return JSONResponse({"error": "resume names no interrupt this server is waiting on"}, 404)
            stream = agui_stream(waiting[1], waiting[0], paused)
            return StreamingResponse(stream, media_type=EventEncoder().get_content_type())
        asked = request_of(given)
        if not asked:
            return JSONResponse({"error": "the input has no user message: nothing to run"}, 400)
        view = AguiEvents(given.run_id, given.thread_id)
        stream = agui_stream(view, source(asked, given.thread_id), paused)
        return StreamingResponse(stream, media_type=EventEncoder().get_content_type())

    return [Route("/agui", start, methods=["POST"])]


async def recorded_stream(look: Look, run_id: str, *, most_seconds: float) -> AsyncIterator[str]:
    """A recorded run's audit records as AG-UI server-sent events (AguiRecords), from its start until it ends, or
    for `most_seconds` (then the stream stops without RUN_FINISHED: read it again to follow the run)."""
    view, encoder, after = AguiRecords(run_id, run_id), EventEncoder(), -1
    deadline = time.monotonic() + most_seconds
    while True:
        looked = await run_in_threadpool(look, run_id, after)
        ended, fresh = looked if looked is not None else (True, [])
        for record in fresh:
            after = int(record.get("seq", after))
            for mapped in view.of(record):
                yield encoder.encode(_EVENT.validate_python(mapped))
        if ended or time.monotonic() > deadline:
            return
        await asyncio.sleep(EVERY)


def recorded_routes(look: Look, *, most_seconds: float) -> list[BaseRoute]:
    """GET /runs/{id}/agui: a run on the record as an AG-UI stream (404 for a run not on it)."""

    async def follow(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        if await run_in_threadpool(look, run_id, 1 << 62) is None:
            return JSONResponse({"error": f"no run {run_id!r} on the record"}, 404)
        stream = recorded_stream(look, run_id, most_seconds=most_seconds)
        return StreamingResponse(stream, media_type=EventEncoder().get_content_type())

    return [Route("/runs/{run_id}/agui", follow, methods=["GET"])]


def config_routes(config: Path | None) -> list[BaseRoute]:
    """The AG-UI route for the runs of `config` (a2a_door.config_source: each in the input's thread)."""
    from aeon.entrypoints.serve.a2a_door import config_source

    return agui_routes(config_source(config))


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" if error["loc"] else json.dumps(error["msg"])
