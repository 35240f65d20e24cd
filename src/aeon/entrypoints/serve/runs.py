"""The runs API of `aeon serve`: start a run (queued), list, read, stream, cancel, decide."""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from aeon.application.errors import InputError
from aeon.entrypoints.serve.context import Served


def routes(served: Served) -> list[BaseRoute]:
    async def start(request: Request) -> Response:
        body = await _body(request, served.serve.max_body)
        options = {k: v for k, v in body.items() if k != "request"}
        run_id = await run_in_threadpool(served.queued.submit, body.get("request"), options)
        return served.json({"run_id": run_id, "status": "queued"}, 202, {"location": f"/runs/{run_id}"})

    return [Route("/runs", start, methods=["POST"])]


async def _body(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object (InputError when it is not one)."""
    raw = await request.body()
    try:
        body = json.loads(raw or b"{}")
    except ValueError as exc:
        raise InputError(f"the body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise InputError("the body must be a JSON object")
    return body
