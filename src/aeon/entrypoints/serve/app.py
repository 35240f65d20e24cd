"""The Starlette app of `aeon serve`: the route groups (each module's `routes(served)`), the Guard in front of all of
them, bodies bounded, an AeonError answered 400 with its one line, and `aeon ui` mounted at /ui."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route

from aeon.adapters.web.guard import Bounded, Guard
from aeon.application.errors import InputError
from aeon.application.runs.openapi import Operation, document
from aeon.application.runs.serving import ServeSettings
from aeon.domain.errors import AeonError
from aeon.entrypoints.serve import a2a, agui, events, runs, schedules, threads
from aeon.entrypoints.serve.context import Served

# One line per route group: each module exposes `routes(served) -> list[BaseRoute]`.
GROUPS: tuple[Callable[[Served], list[BaseRoute]], ...] = (
    runs.routes,
    events.routes,
    threads.routes,
    schedules.routes,
    a2a.routes,
    agui.routes,
)
# What the OpenAPI document shows of each group: `operations(serve_settings) -> list[Operation]`.
DOCUMENTED: tuple[Callable[[ServeSettings], list[Operation]], ...] = (
    runs.operations,
    events.operations,
    threads.operations,
    schedules.operations,
    a2a.operations,
    agui.operations,
)


def openapi(serve: ServeSettings) -> dict[str, Any]:
    """The OpenAPI document of a server with `serve` settings (docs/openapi.json: the default settings')."""
    return document([op for group in DOCUMENTED for op in group(serve)])


def create_server(served: Served, *, hashes: Collection[str] | None, hosts: frozenset[str] | None) -> Starlette:
    """The server: `hashes` the SHA-256 of the tokens a request must bear one of (None: none needed, loopback),
    `hosts` the Host headers answered (None: any)."""
    routes = [route for group in GROUPS for route in group(served)]
    doc = openapi(served.serve)
    routes.append(Route("/openapi.json", lambda _: served.json(doc), methods=["GET"]))
    if served.ui is not None:
        routes.append(Mount("/ui", app=served.ui))
    guard = Middleware(Guard, token=None, hosts=hosts, cookie="aeon_serve", hashes=hashes, door="aeon serve")
    bounded = Middleware(Bounded, most=served.serve.max_body, door="aeon serve", why=" (serve.max_body)")
    handlers = {AeonError: _refused(served, 400)}
    return Starlette(routes=routes, middleware=[guard, bounded], exception_handlers=handlers)


def _refused(served: Served, status: int) -> Callable[[Request, Exception], Response]:
    def handler(request: Request, exc: Exception) -> Response:
        code = getattr(exc, "code", "AEON")
        return served.json({"error": {"code": code, "message": str(exc)}}, 404 if _unknown(exc) else status)

    return handler


def _unknown(exc: Exception) -> bool:
    return isinstance(exc, InputError) and str(exc).startswith(("no run ", "no thread named", "no schedule named"))
