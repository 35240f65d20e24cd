"""WebhookSender: one JSON document POSTed to a configured URL, signed with HMAC-SHA256 of a shared secret
(`X-Aeon-Signature: sha256=<hex>` over the exact body), at most `max_body` bytes, retried on a connection error, a
timeout, 429 or 5xx with backoff for at most `attempts` tries; a 2xx ends it, any other answer is not retried."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import httpx
import msgspec
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential, wait_random

_RETRIED = (429, 500, 502, 503, 504)


class _Again(Exception):
    """An answer worth another try."""


def signature(secret: str, body: bytes) -> str:
    """The X-Aeon-Signature header's value for `body`: what a receiver computes again to trust it."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def bounded(document: dict[str, Any], most: int) -> bytes:
    """`document` as JSON of at most `most` bytes: past that its `run.result` is left out and `truncated` says so."""
    body = msgspec.json.encode(document)
    if len(body) <= most:
        return body
    run = {k: v for k, v in document.get("run", {}).items() if k in ("run_id", "status", "request", "started")}
    body = msgspec.json.encode({**document, "run": {**run, "request": str(run.get("request", ""))[:1000]},
                                "truncated": True})  # fmt: skip
    return body[:most]


class WebhookSender:
    """POSTs to `url` signed with `secret`; `transport` is the test seam (httpx.MockTransport)."""

    def __init__(
        self, url: str, secret: str, *, attempts: int = 5, timeout: float = 10.0, max_body: int = 64_000,
        wait: float = 0.5, transport: httpx.BaseTransport | None = None,
    ) -> None:  # fmt: skip
        self._url, self._secret, self._attempts, self._most, self._wait = url, secret, attempts, max_body, wait
        self._client = httpx.Client(timeout=timeout, transport=transport, follow_redirects=False)

    def send(self, document: dict[str, Any], delivery: str) -> int:
        """POST `document` (delivery id `delivery`, the same on every try of it); the status of the last answer, or
        0 when no answer came. Raises nothing."""
        body = bounded(document, self._most)
        headers = {"content-type": "application/json", "x-aeon-signature": signature(self._secret, body),
                   "x-aeon-delivery": delivery, "user-agent": "aeon-webhook"}  # fmt: skip
        status = 0
        retrying = Retrying(
            stop=stop_after_attempt(self._attempts),
            wait=wait_exponential(multiplier=self._wait, max=30) + wait_random(0, self._wait),  # any tenacity
            retry=retry_if_exception_type((_Again, httpx.TransportError)), reraise=True,
        )  # fmt: skip
        try:
            for attempt in retrying:
                with attempt:
                    status = 0
                    status = self._client.post(self._url, content=body, headers=headers).status_code
                    if status in _RETRIED:
                        raise _Again(status)
        except (_Again, httpx.HTTPError):
            pass
        return status

    def close(self) -> None:
        self._client.close()
