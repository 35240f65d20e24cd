"""Who may use `aeon ui`, checked on every request before a page is made: on a loopback address only requests
naming it (no DNS rebinding); elsewhere only with the token printed at start; a decision only from the page itself
(same origin, and the form's anti-forgery field); and headers that keep the browser from loading anything else."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import Headers

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

# Scripts, styles and images from the page's own origin only: no inline script runs even if text slipped through
# unescaped, nothing is fetched from elsewhere, no other site may frame the page or receive a form.
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_HEADERS = [
    (b"content-security-policy", POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
_SAFE_METHODS = ("GET", "HEAD")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Guard:
    """ASGI middleware in front of the whole app. `token` (None on a loopback address) must come with every request:
    as `?token=` once (answered with a cookie and a redirect to the same page without it), then the cookie, or an
    `Authorization: Bearer` header. `hosts`: the Host headers a loopback server answers to."""

    def __init__(self, app: App, *, token: str | None, hosts: frozenset[str] | None, cookie: str) -> None:
        self._app, self._token, self._hosts, self._cookie = app, token, hosts, cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if self._hosts is not None and headers.get("host", "").lower() not in self._hosts:
            await _refuse(send, 421, "this aeon ui answers only to its own loopback address")
            return
        if self._token is not None:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            if _same(query.get("token"), self._token):
                await self._welcome(scope, send, query)
                return
            if not (_same(_cookie(headers, self._cookie), self._token) or _same(_bearer(headers), self._token)):
                await _refuse(send, 401, "this aeon ui needs its token: open the address it printed when it started")
                return
        if scope["method"] not in _SAFE_METHODS and not _same_origin(headers):
            await _refuse(send, 403, "refused: a request from another site may not change anything here")
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self._app(scope, receive, secured)

    async def _welcome(self, scope: Scope, send: Send, query: dict[str, str]) -> None:
        """The token in the address: keep it in a cookie for this site only, and show the page without it (so it
        stays out of the history and of links)."""
        rest = urlencode({k: v for k, v in query.items() if k != "token"})
        location = scope.get("path", "/") + (f"?{rest}" if rest else "")
        cookie = f"{self._cookie}={self._token}; HttpOnly; SameSite=Strict; Path=/"
        headers = [(b"location", location.encode()), (b"set-cookie", cookie.encode()), *_HEADERS]
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def _cookie(headers: Headers, name: str) -> str | None:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # a malformed cookie header is no token
        return None
    found = jar.get(name)
    return found.value if found is not None else None


def _bearer(headers: Headers) -> str | None:
    scheme, _, value = headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def _same_origin(headers: Headers) -> bool:
    """A state-changing request comes from a page of this server: the browser says the site is the same (every
    current browser sends Sec-Fetch-Site), or, from an older one, the Origin it names is this host. A request with
    neither comes from no browser (a script): the form's anti-forgery field decides."""
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = headers.get("origin")
    if origin is None:
        return True
    return origin.split("://", 1)[-1].lower() == headers.get("host", "").lower()


async def _refuse(send: Send, status: int, message: str) -> None:
    body = f"aeon ui: {message}\n".encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()), *_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def loopback_hosts(host: str, port: int) -> frozenset[str]:
    """The Host headers a browser sends to a loopback server on `port`."""
    names = {"localhost", "127.0.0.1", "[::1]", host if ":" not in host else f"[{host.strip('[]')}]"}
    return frozenset(f"{name}:{port}" for name in names)


def csrf_ok(given: str | None, expected: str) -> bool:
    return _same(given, expected)
