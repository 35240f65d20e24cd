"""`aeon serve`'s AG-UI routes: POST /agui with the protocol's RunAgentInput starts a run of the last user message
(or resumes one waiting on an interrupt) and streams it as AG-UI server-sent events (agui_stream.py); GET
/runs/{id}/agui streams a recorded run's audit records."""

from __future__ import annotations

import json
from collections.abc import Callable

from ag_ui.core import RunAgentInput
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from aeon.adapters.protocols.agui_stream import (
    MEDIA_TYPE,
    Answer,
    Events,
    Look,
    Paused,
    agui_stream,
    recorded_stream,
    request_of,
    resumed,
)
from aeon.adapters.protocols.held import Held
from aeon.application.views.agui import AguiEvents

Source = Callable[[str, str | None], Events]  # a run's events for a request in a thread (a2a_executor.Source)


def agui_routes(source: Source, answer: Answer) -> list[BaseRoute]:
    """POST /agui: a run from `source` of the input's last user message in its thread, or the resumption of one
    waiting on an interrupt (`answer` hands it the decision), streamed as AG-UI events."""
    paused: Paused = Held()

    async def start(request: Request) -> Response:
        try:
            given = RunAgentInput.model_validate_json(await request.body())
        except ValidationError as exc:
            return JSONResponse({"error": f"not an AG-UI RunAgentInput: {_first(exc)}"}, 422)
        if given.resume:
            waiting = resumed(given, paused, answer)
            if waiting is None:
                return JSONResponse({"error": "resume names no interrupt this server is waiting on"}, 404)
            stream = agui_stream(waiting[1], waiting[0], paused)
            return StreamingResponse(stream, media_type=MEDIA_TYPE)
        asked = request_of(given)
        if not asked:
            return JSONResponse({"error": "the input has no user message: nothing to run"}, 400)
        view = AguiEvents(given.run_id, given.thread_id)
        stream = agui_stream(view, source(asked, given.thread_id), paused)
        return StreamingResponse(stream, media_type=MEDIA_TYPE)

    return [Route("/agui", start, methods=["POST"])]


def recorded_routes(look: Look, *, most_seconds: float, most_records: int) -> list[BaseRoute]:
    """GET /runs/{id}/agui: a run on the record as an AG-UI stream (404 for a run not on it)."""

    async def follow(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        if await run_in_threadpool(look, run_id, 1 << 62) is None:
            return JSONResponse({"error": f"no run {run_id!r} on the record"}, 404)
        stream = recorded_stream(look, run_id, most_seconds=most_seconds, most_records=most_records)
        return StreamingResponse(stream, media_type=MEDIA_TYPE)

    return [Route("/runs/{run_id}/agui", follow, methods=["GET"])]


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" if error["loc"] else json.dumps(error["msg"])
