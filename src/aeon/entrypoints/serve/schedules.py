"""The schedules API of `aeon serve`: add, list, pause, resume and remove schedules (runs taken by the servers and
workers serving the durable queue, each tick once)."""

from __future__ import annotations

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from aeon.adapters.web.bodies import body_of
from aeon.application.errors import InputError
from aeon.application.runs.openapi_groups import schedules_operations
from aeon.entrypoints.serve.context import Served

operations = schedules_operations  # what the OpenAPI document shows of these routes


def routes(served: Served) -> list[BaseRoute]:
    schedules = served.schedules
    if schedules is None:
        return []

    async def add(request: Request) -> Response:
        body = await body_of(request)
        cron, asked, name = body.get("cron"), body.get("request"), body.get("name")
        if not isinstance(cron, str) or not isinstance(asked, str) or not isinstance(name, str | None):
            raise InputError("a schedule is {'cron': '0 7 * * *', 'request': '…'} and an optional 'name'")
        made = await run_in_threadpool(schedules.add, cron, asked, name)
        return served.json(msgspec.to_builtins(made), 201, {"location": f"/schedules/{made.name}"})

    async def listed(request: Request) -> Response:
        return served.json({"schedules": msgspec.to_builtins(await run_in_threadpool(schedules.list))})

    def change(verb: str, said: str) -> Route:
        async def changed(request: Request) -> Response:
            name = request.path_params["name"]
            await run_in_threadpool(getattr(schedules, verb), name)
            return served.json({"schedule": name, "status": said})

        path = "/schedules/{name}" if verb == "remove" else f"/schedules/{{name}}/{verb}"
        return Route(path, changed, methods=["DELETE" if verb == "remove" else "POST"])

    return [
        Route("/schedules", add, methods=["POST"]),
        Route("/schedules", listed, methods=["GET"]),
        change("pause", "paused"),
        change("resume", "active"),
        change("remove", "removed"),
    ]
