"""The threads API of `aeon serve`: make, list, read and delete threads (a run joins one: POST /runs "thread")."""

from __future__ import annotations

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from aeon.adapters.web.bodies import body_of
from aeon.application.runs.openapi_groups import threads_operations
from aeon.entrypoints.serve.context import Served

operations = threads_operations  # what the OpenAPI document shows of these routes


def routes(served: Served) -> list[BaseRoute]:
    threads = served.threads
    if threads is None:
        return []

    async def make(request: Request) -> Response:
        name = (await body_of(request)).get("name")
        made = await run_in_threadpool(threads.create, name if isinstance(name, str) else "")
        return served.json(msgspec.to_builtins(made), 201, {"location": f"/threads/{made.name}"})

    async def listed(request: Request) -> Response:
        return served.json({"threads": msgspec.to_builtins(await run_in_threadpool(threads.list))})

    async def shown(request: Request) -> Response:
        return served.json(msgspec.to_builtins(await run_in_threadpool(threads.show, request.path_params["name"])))

    async def deleted(request: Request) -> Response:
        name = request.path_params["name"]
        await run_in_threadpool(threads.delete, name)
        return served.json({"deleted": name})

    return [
        Route("/threads", make, methods=["POST"]),
        Route("/threads", listed, methods=["GET"]),
        Route("/threads/{name}", shown, methods=["GET"]),
        Route("/threads/{name}", deleted, methods=["DELETE"]),
    ]
