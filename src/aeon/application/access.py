"""Who may reach Aeon over HTTP, decided from a request's values alone (the door reads them, this says yes or no): on
a loopback address only requests naming it (no DNS rebinding); elsewhere only with the token printed at start; a
state-changing request only from a page of the server itself (no cross-site request); and the headers that keep a
browser from loading anything else. `aeon ui` asks it on every request; any HTTP door of Aeon may."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Collection
from dataclasses import dataclass
from http.cookies import SimpleCookie

# Scripts, styles and images from the page's own origin only: no inline script runs even if text slipped through
# unescaped, nothing is fetched from elsewhere, no other site may frame the page or receive a form.
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = (
    ("content-security-policy", POLICY),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
)
_SAFE_METHODS = ("GET", "HEAD")


@dataclass(frozen=True)
class Asked:
    """What a request shows of itself: its method, its `?token=` if any, and the headers access depends on."""

    method: str
    host: str = ""
    query_token: str | None = None
    cookie: str = ""
    authorization: str = ""
    fetch_site: str | None = None
    origin: str | None = None


@dataclass(frozen=True)
class Refused:
    """The request is refused with this status and message."""

    status: int
    message: str


@dataclass(frozen=True)
class Welcome:
    """The token came in the address: keep it in a cookie and show the page without it."""


@dataclass(frozen=True)
class Access:
    """The rule of one server: `token` (None on a loopback address) must come with every request, as `?token=`
    once, then the cookie named `cookie`, or an `Authorization: Bearer` header; `hashes`: the SHA-256 (hex) of
    other tokens any of which will do as well (`aeon serve`'s, kept hashed; not None: a token is needed, even when
    it is empty); `hosts`: the Host headers a loopback server answers to (None: any); `door`: the server's name in
    its refusals."""

    token: str | None
    hosts: frozenset[str] | None
    cookie: str
    door: str = "aeon ui"
    hashes: Collection[str] | None = None

    def decide(self, asked: Asked) -> Refused | Welcome | None:
        """None: the request may go on."""
        if self.hosts is not None and asked.host.lower() not in self.hosts:
            return Refused(421, f"this {self.door} answers only to its own loopback address")
        if self.token is not None or self.hashes is not None:
            if self.known(asked.query_token):
                return Welcome()
            given = (cookie_value(asked.cookie, self.cookie), bearer(asked.authorization))
            if not any(self.known(one) for one in given):
                return Refused(401, f"this {self.door} needs its token: open the address it printed when it started")
        if asked.method not in _SAFE_METHODS and not same_origin(asked):
            return Refused(403, "refused: a request from another site may not change anything here")
        return None

    def known(self, given: str | None) -> bool:
        """`given` is the token, or one of those whose hash this server keeps."""
        if given is None:
            return False
        digest = hashlib.sha256(given.encode()).hexdigest()
        return (self.token is not None and same(given, self.token)) or any(same(digest, h) for h in self.hashes or ())


def same(given: str | None, token: str) -> bool:
    """`given` is `token` (compared in constant time)."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def cookie_value(header: str, name: str) -> str | None:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:  # a malformed cookie header is no token
        return None
    found = jar.get(name)
    return found.value if found is not None else None


def bearer(header: str) -> str | None:
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def same_origin(asked: Asked) -> bool:
    """A state-changing request comes from a page of this server: the browser says the site is the same (every
    current browser sends Sec-Fetch-Site), or, from an older one, the Origin it names is this host. A request with
    neither comes from no browser (a script): the form's anti-forgery field decides."""
    if asked.fetch_site is not None:
        return asked.fetch_site in ("same-origin", "none")
    if asked.origin is None:
        return True
    return asked.origin.split("://", 1)[-1].lower() == asked.host.lower()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def loopback_hosts(host: str, port: int) -> frozenset[str]:
    """The Host headers a browser sends to a loopback server on `port`."""
    names = {"localhost", "127.0.0.1", "[::1]", host if ":" not in host else f"[{host.strip('[]')}]"}
    return frozenset(f"{name}:{port}" for name in names)
