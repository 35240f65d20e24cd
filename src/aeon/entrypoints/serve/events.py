"""GET /runs/{id}/events: a run's typed audit records as server-sent events from its start (or after the record
named by Last-Event-ID), each event's id the record's seq; it ends when the run ends, or at its bounds."""

from __future__ import annotations

from functools import partial

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from aeon.adapters.web.sse import event_stream
from aeon.application.errors import InputError
from aeon.application.runs.openapi import Error, Operation
from aeon.application.runs.serving import ServeSettings
from aeon.application.views.run_resource import Looked
from aeon.entrypoints.serve.context import Served


def operations(serve: ServeSettings) -> list[Operation]:
    summary = "A run's audit records from its start (or past Last-Event-ID) as server-sent events, to its end"
    return [Operation("GET", "/runs/{run_id}/events", summary, None, {404: Error}, ("after",), stream=True)]


def routes(served: Served) -> list[BaseRoute]:
    return [Route("/runs/{run_id}/events", partial(_events, served))]


async def _events(served: Served, request: Request) -> Response:
    run_id = request.path_params["run_id"]
    given = request.headers.get("last-event-id") or request.query_params.get("after") or "-1"
    if not given.lstrip("-").isdigit():
        raise InputError("Last-Event-ID must be the id (seq) of an event of this stream")
    if await run_in_threadpool(served.events.look, run_id, 1 << 62) is None:
        raise InputError(f"no run {run_id!r} on the record")

    async def look(after: int) -> Looked:
        return await run_in_threadpool(served.events.look, run_id, after)

    stream = served.events.stream(look, int(given), served.serve.max_events, served.serve.max_stream_seconds)
    return event_stream(stream)
