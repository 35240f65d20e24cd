"""The Starlette app of `aeon serve`: the route groups (each module's `routes(served)`), the Guard in front of all of
them, bodies bounded, an AeonError answered 400 with its one line, and `aeon ui` mounted at /ui."""

from __future__ import annotations

from collections.abc import Callable

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount

from aeon.application.errors import InputError
from aeon.domain.errors import AeonError
from aeon.entrypoints.serve import a2a, agui, runs
from aeon.entrypoints.serve.context import Served
from aeon.entrypoints.ui.guard import App, Guard, Message, Receive, Scope, Send

# One line per route group: each module exposes `routes(served) -> list[BaseRoute]`.
GROUPS: tuple[Callable[[Served], list[BaseRoute]], ...] = (runs.routes, a2a.routes, agui.routes)


def create_server(served: Served, *, hashes: frozenset[str], hosts: frozenset[str] | None) -> Starlette:
    """The server: `hashes` the SHA-256 of the tokens a request may bear (empty: none needed, loopback only),
    `hosts` the Host headers answered (None: any)."""
    routes = [route for group in GROUPS for route in group(served)]
    if served.ui is not None:
        routes.append(Mount("/ui", app=served.ui))
    guard = Middleware(Guard, token=None, hosts=hosts, cookie="aeon_serve", hashes=hashes, door="aeon serve")
    bounded = Middleware(Bounded, most=served.serve.max_body)
    handlers = {AeonError: _refused(served, 400)}
    return Starlette(routes=routes, middleware=[guard, bounded], exception_handlers=handlers)


class Bounded:
    """A request body over `most` bytes is refused (413) before it is read whole, whatever it says its length is."""

    def __init__(self, app: App, *, most: int) -> None:
        self._app, self._most = app, most

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        length = dict(scope.get("headers", [])).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > self._most:
            await _too_large(send, self._most)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self._most:
                raise _TooLarge
            return message

        try:
            await self._app(scope, counted, send)
        except _TooLarge:
            await _too_large(send, self._most)


class _TooLarge(Exception):
    pass


async def _too_large(send: Send, most: int) -> None:
    body = f"aeon serve: a request body may hold at most {most} bytes (serve.max_body)\n".encode()
    await send({"type": "http.response.start", "status": 413, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": body})


def _refused(served: Served, status: int) -> Callable[[Request, Exception], Response]:
    def handler(request: Request, exc: Exception) -> Response:
        code = getattr(exc, "code", "AEON")
        return served.json({"error": {"code": code, "message": str(exc)}}, 404 if _unknown(exc) else status)

    return handler


def _unknown(exc: Exception) -> bool:
    return isinstance(exc, InputError) and str(exc).startswith("no run ")
