"""Retrying JSON POST over httpx: the only place transport errors and HTTP statuses become port errors."""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import ssl
import time
from collections.abc import Callable, Iterable, Mapping
from random import random as uniform01
from typing import Any, NoReturn

import httpx

from aeon.adapters.llm._retry import RetryPolicy, Sleep
from aeon.application.errors import LLMBadResponse, LLMRejected, LLMTransient
from aeon.application.json_text import loads
from aeon.application.ports import LoggerPort

# The timeouts and retryable statuses of the official OpenAI and Anthropic Python SDKs (the waits: _retry.py).
CONNECT_TIMEOUT = 5.0
_RETRYABLE_4XX = frozenset({408, 409, 429})  # and every status >= 500, Anthropic's 529 "overloaded" included
_SNIPPET_CHARS = 200

_TIMEOUT_CAUSES: tuple[tuple[type[httpx.TimeoutException], str], ...] = (
    (httpx.ReadTimeout, "read timeout"),
    (httpx.WriteTimeout, "write timeout"),
    (httpx.PoolTimeout, "pool timeout"),
)


def should_retry(status: int, headers: httpx.Headers) -> bool:
    """The SDK rule for an error status: `x-should-retry` wins both ways, else 408/409/429 and every 5xx."""
    verdict = headers.get("x-should-retry")
    if verdict == "true":
        return True
    if verdict == "false":
        return False
    return status in _RETRYABLE_4XX or status >= 500


def retry_after_seconds(headers: httpx.Headers, now: Callable[[], float]) -> float | None:
    """The wait the server asks for: `retry-after-ms`, else `retry-after` as seconds or an HTTP date; None if absent."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return float(email.utils.mktime_tz(parsed)) - now()


def _snippet(content: bytes) -> str:
    return " ".join(content.decode("utf-8", "replace").split())[:_SNIPPET_CHARS]


def _provider_error(content: bytes) -> tuple[str, str | None, str | None]:
    """(message, param, code) of an error body: `error.message` (OpenAI, Anthropic, llama.cpp), a bare
    `error`/`message`/`detail` string, else a text snippet; `error.param` and `error.code` where OpenAI gives them."""
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        nested = error.get("message") if isinstance(error, dict) else error
        param = error.get("param") if isinstance(error, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        for candidate in (nested, data.get("message"), data.get("detail")):
            if isinstance(candidate, str) and candidate.strip():
                return (
                    " ".join(candidate.split())[:_SNIPPET_CHARS],
                    param if isinstance(param, str) else None,
                    code if isinstance(code, str) else None,
                )
    return _snippet(content), None, None


def _where(url: httpx.URL) -> str:
    """The URL a request went to, as an error may quote it: no user, password, query or fragment (they may hold a
    key)."""
    return str(url.copy_with(userinfo=b"", query=None, fragment=None))


def _os_error(exc: BaseException) -> OSError | None:
    """The operating system's own error under a transport error (httpx → httpcore → anyio → the socket's), if any."""
    pending, seen = [exc], set()
    while pending:
        error = pending.pop(0)
        if id(error) in seen:
            continue
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno is not None:
            return error
        pending.extend(e for e in (error.__cause__, error.__context__) if e is not None)
        pending.extend(getattr(error, "exceptions", ()))  # anyio's "All connection attempts failed" keeps each try
    return None


def _connect_cause(exc: httpx.ConnectError, url: httpx.URL) -> str:
    """Why no connection was made, naming where to: a refusal, else the system's reason (a name not resolved …)."""
    root = _os_error(exc)
    if isinstance(root, ConnectionRefusedError):
        return f"connection refused at {_where(url)}"
    reason = root.strerror if root is not None and root.strerror else " ".join(str(exc).split())[:_SNIPPET_CHARS]
    return f"could not connect to {_where(url)}" + (f" ({reason})" if reason else "")


def _raise_transport_error(exc: httpx.TransportError, url: httpx.URL) -> NoReturn:
    # A failure to connect names the URL: the endpoint is config, and a wrong one is the likeliest cause.
    if isinstance(exc, httpx.ConnectTimeout):
        raise LLMTransient(f"connect timeout at {_where(url)}") from exc
    if isinstance(exc, httpx.ConnectError):
        raise LLMTransient(_connect_cause(exc, url)) from exc
    for kind, cause in _TIMEOUT_CAUSES:
        if isinstance(exc, kind):
            raise LLMTransient(cause, slow=kind is httpx.ReadTimeout) from exc  # sent, then no answer in time
    if isinstance(exc, httpx.TimeoutException):
        raise LLMTransient("timeout") from exc
    if isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError | httpx.ProxyError):
        raise LLMTransient("connection error") from exc
    # UnsupportedProtocol / LocalProtocolError: our request is malformed, so a retry cannot help. The message of a
    # local protocol error may quote a header value (the API key), so it is neither copied nor chained.
    raise LLMRejected(f"rejected: request could not be sent ({type(exc).__name__})") from None


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default TLS context, built once per process: loading the CA bundle costs about 100 ms of CPU, which
    a batch building one adapter per run would otherwise pay per run. Contexts are safe to share between clients."""
    return httpx.create_ssl_context()


class JsonPoster:
    """POSTs JSON to one provider through one `httpx.AsyncClient`, retrying transient failures like the vendor SDKs.

    Raises LLMUnavailable when transient failures outlast `max_attempts`, LLMRejected for a non-retryable status or
    an unsendable request, LLMBadResponse for a 2xx body that is not a JSON object. Values in `secrets` are blanked
    from every provider text copied into an error.
    """

    def __init__(
        self,
        base_url: str,
        *,
        read_timeout: float = 60.0,
        max_attempts: int = 3,
        logger: LoggerPort | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep = asyncio.sleep,
        random: Callable[[], float] = uniform01,
        now: Callable[[], float] = time.time,
        secrets: Iterable[str] = (),
        status: Callable[[str], None] | None = None,
    ) -> None:
        self._retry = RetryPolicy(max_attempts=max_attempts, sleep=sleep, random=random, logger=logger, status=status)
        self._attempt_seconds = read_timeout
        self._client = httpx.AsyncClient(
            base_url=base_url,
            timeout=httpx.Timeout(read_timeout, connect=CONNECT_TIMEOUT),
            transport=transport,
            headers={"accept": "application/json"},
            verify=_tls_context(),
        )
        self._now = now
        self._secrets = tuple(secret for secret in secrets if secret)

    def __repr__(self) -> str:
        return f"JsonPoster(base_url={str(self._client.base_url)!r}, max_attempts={self._retry.max_attempts})"

    async def post_json(
        self, path: str, body: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> tuple[dict[str, Any], httpx.Headers]:
        """POST `body` to `path` (relative to the base URL); return the decoded JSON object and the response headers.

        Each attempt, from sending the request to the last byte of the answer, gets at most `read_timeout` seconds:
        httpx's own read timeout counts only the gap between two bytes, so a server trickling its answer would
        otherwise hold the call forever.
        """
        return await self._retry.run(self._bounded_attempt, path, body, headers)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _bounded_attempt(
        self, path: str, body: Mapping[str, Any], headers: Mapping[str, str] | None
    ) -> tuple[dict[str, Any], httpx.Headers]:
        try:
            async with asyncio.timeout(self._attempt_seconds):
                return await self._attempt(path, body, headers)
        except TimeoutError as exc:
            raise LLMTransient(f"no complete answer within {self._attempt_seconds:g} s", slow=True) from exc

    async def _attempt(
        self, path: str, body: Mapping[str, Any], headers: Mapping[str, str] | None
    ) -> tuple[dict[str, Any], httpx.Headers]:
        try:
            request = self._client.build_request("POST", path, json=body, headers=headers)
        except httpx.InvalidURL:
            raise LLMRejected("rejected: invalid provider URL") from None
        try:
            response = await self._client.send(request, stream=True)
        except httpx.TransportError as exc:
            _raise_transport_error(exc, request.url)
        try:
            content = await response.aread()
        except httpx.TransportError as exc:
            _raise_transport_error(exc, request.url)
        except httpx.DecodingError as exc:
            raise LLMBadResponse(f"undecodable response body (HTTP {response.status_code})") from exc
        finally:
            # Streamed so that every failed attempt gives its connection back before the next one starts.
            await response.aclose()
        status = response.status_code
        if response.is_success:
            return self._decode_object(content, status), response.headers
        if should_retry(status, response.headers):
            retry_after = retry_after_seconds(response.headers, self._now)
            raise LLMTransient(f"HTTP {status}", status=status, retry_after=retry_after)
        raw, param, code = _provider_error(content)
        message = self._scrub(raw)
        raise LLMRejected(
            f"rejected: HTTP {status} {message}".rstrip(),
            status=status,
            provider_message=message,
            provider_param=param,
            provider_code=code,
        )

    def _decode_object(self, content: bytes, status: int) -> dict[str, Any]:
        try:
            data = loads(content)  # a "\\ud83d" without its pair becomes U+FFFD
        except ValueError as exc:
            snippet = self._scrub(_snippet(content))
            raise LLMBadResponse(f"undecodable response body (HTTP {status}): {snippet}", status=status) from exc
        if not isinstance(data, dict):
            raise LLMBadResponse(f"response body is not a JSON object (HTTP {status})", status=status)
        return data

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text
