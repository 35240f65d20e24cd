"""Who may use a web door (`aeon ui`, `aeon serve`), checked on every request before a page is made: the request's
host, origin, token and headers read here and judged by application/access (no DNS rebinding, no cross-site decision,
the token off loopback), and the headers that keep the browser from loading anything else added to every answer; and
Bounded, which refuses a request body past a size (`aeon serve`'s)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import Headers

from aeon.application.access import SECURITY_HEADERS, Access, Asked, Refused

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_HEADERS = [(name.encode(), value.encode()) for name, value in SECURITY_HEADERS]


class Guard:
    """ASGI middleware in front of the whole app, asking `Access(token, hosts, cookie)` about every request; a token
    in the address is answered with a cookie and a redirect to the same page without it."""

    def __init__(
        self, app: App, *, token: str | None, hosts: frozenset[str] | None, cookie: str,
        hashes: Collection[str] | None = None, door: str = "aeon ui",
    ) -> None:  # fmt: skip
        self._app, self._access = app, Access(token=token, hosts=hosts, cookie=cookie, hashes=hashes, door=door)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        asked = Asked(
            method=scope["method"], host=headers.get("host", ""), query_token=query.get("token"),
            cookie=headers.get("cookie", ""), authorization=headers.get("authorization", ""),
            fetch_site=headers.get("sec-fetch-site"), origin=headers.get("origin"),
        )  # fmt: skip
        verdict = self._access.decide(asked)
        if isinstance(verdict, Refused):
            await _refuse(send, verdict.status, f"{self._access.door}: {verdict.message}")
            return
        if verdict is not None:
            await self._welcome(scope, send, query, query["token"])
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self._app(scope, receive, secured)

    async def _welcome(self, scope: Scope, send: Send, query: dict[str, str], token: str) -> None:
        """The token in the address: keep it in a cookie for this site only, and show the page without it (so it
        stays out of the history and of links)."""
        rest = urlencode({k: v for k, v in query.items() if k != "token"})
        location = scope.get("path", "/") + (f"?{rest}" if rest else "")
        cookie = f"{self._access.cookie}={token}; HttpOnly; SameSite=Strict; Path=/"
        headers = [(b"location", location.encode()), (b"set-cookie", cookie.encode()), *_HEADERS]
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


class Bounded:
    """A request body over `most` bytes is refused (413) before it is read whole, whatever its length says."""

    def __init__(self, app: App, *, most: int, door: str, why: str = "") -> None:
        self._app, self._most, self._door, self._why = app, most, door, why

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        length = dict(scope.get("headers", [])).get(b"content-length", b"0")
        seen = [0 if length.isdigit() and int(length) <= self._most else self._most + 1]

        async def counted() -> Message:
            message = await receive()
            seen[0] += len(message.get("body", b""))
            if seen[0] > self._most:
                raise _TooLarge
            return message

        try:
            if seen[0] > self._most:
                raise _TooLarge
            await self._app(scope, counted if scope["type"] == "http" else receive, send)
        except _TooLarge:
            body = f"{self._door}: a request body may hold at most {self._most} bytes{self._why}\n".encode()
            await send({"type": "http.response.start", "status": 413, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    """A body past the bound."""


async def _refuse(send: Send, status: int, message: str) -> None:
    body = f"{message}\n".encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()), *_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
