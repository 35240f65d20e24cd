"""Retrying JSON POST over httpx: the only place transport errors and HTTP statuses become port errors."""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from random import random as uniform01
from typing import Any, NoReturn

import httpx

from aeon.application.errors import LLMBadResponse, LLMRejected, LLMTransient, LLMUnavailable
from aeon.application.ports import LoggerPort

Sleep = Callable[[float], Awaitable[None]]

# The retry policy of the official OpenAI and Anthropic Python SDKs, so a provider sees the client it expects.
CONNECT_TIMEOUT = 5.0
INITIAL_BACKOFF = 0.5
MAX_BACKOFF = 8.0
MAX_RETRY_AFTER = 60.0
_RETRYABLE_4XX = frozenset({408, 409, 429})  # and every status >= 500, Anthropic's 529 "overloaded" included
_SNIPPET_CHARS = 200

_TIMEOUT_CAUSES: tuple[tuple[type[httpx.TimeoutException], str], ...] = (
    (httpx.ConnectTimeout, "connect timeout"),
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


def backoff_seconds(retries_done: int, retry_after: float | None, random: Callable[[], float]) -> float:
    """Honour a sane server wait (0 < wait <= 60 s), else 0.5 s doubling to 8 s, scaled by a jitter in (0.75, 1]."""
    if retry_after is not None and math.isfinite(retry_after) and 0 < retry_after <= MAX_RETRY_AFTER:
        return retry_after
    base = min(INITIAL_BACKOFF * 2.0 ** min(retries_done, 64), MAX_BACKOFF)
    return base * (1 - 0.25 * random())


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


def _raise_transport_error(exc: httpx.TransportError) -> NoReturn:
    for kind, cause in _TIMEOUT_CAUSES:
        if isinstance(exc, kind):
            raise LLMTransient(cause) from exc
    if isinstance(exc, httpx.TimeoutException):
        raise LLMTransient("timeout") from exc
    if isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError | httpx.ProxyError):
        raise LLMTransient("connection error") from exc
    # UnsupportedProtocol / LocalProtocolError: our request is malformed, so a retry cannot help. The message of a
    # local protocol error may quote a header value (the API key), so it is neither copied nor chained.
    raise LLMRejected(f"rejected: request could not be sent ({type(exc).__name__})") from None


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
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._attempt_seconds = read_timeout
        self._status = status
        self._client = httpx.AsyncClient(
            base_url=base_url,
            timeout=httpx.Timeout(read_timeout, connect=CONNECT_TIMEOUT),
            transport=transport,
            headers={"accept": "application/json"},
        )
        self._max_attempts = max_attempts
        self._logger = logger
        self._sleep = sleep
        self._random = random
        self._now = now
        self._secrets = tuple(secret for secret in secrets if secret)

    def __repr__(self) -> str:
        return f"JsonPoster(base_url={str(self._client.base_url)!r}, max_attempts={self._max_attempts})"

    async def post_json(
        self, path: str, body: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> tuple[dict[str, Any], httpx.Headers]:
        """POST `body` to `path` (relative to the base URL); return the decoded JSON object and the response headers.

        Each attempt, from sending the request to the last byte of the answer, gets at most `read_timeout` seconds:
        httpx's own read timeout counts only the gap between two bytes, so a server trickling its answer would
        otherwise hold the call forever.
        """
        attempt, waits = 0, list[float]()
        while True:
            attempt += 1
            try:
                async with asyncio.timeout(self._attempt_seconds):
                    return await self._attempt(path, body, headers)
            except TimeoutError:
                failure = LLMTransient(f"no complete answer within {self._attempt_seconds:g} s")
            except LLMTransient as exc:
                failure = exc
            cause = str(failure)
            if attempt >= self._max_attempts:
                self._emit("llm_giveup", attempts=attempt, cause=cause, status=failure.status, waits=waits)
                waited = f"; waited {', '.join(f'{w:.1f} s' for w in waits)}" if waits else ""
                raise LLMUnavailable(
                    f"provider unavailable after {attempt} attempts ({cause}{waited})",
                    status=failure.status,
                    attempts=attempt,
                    cause=cause,
                    waits=tuple(waits),
                    retry_after=failure.retry_after,
                ) from failure
            wait = backoff_seconds(attempt - 1, failure.retry_after, self._random)
            waits.append(wait)
            self._emit("llm_retry", attempt=attempt, cause=cause, status=failure.status, wait_seconds=wait)
            if self._status is not None:
                self._status(
                    f"{cause} from the provider: attempt {attempt + 1} of {self._max_attempts} in {wait:.1f} s"
                )
            await self._sleep(wait)

    async def aclose(self) -> None:
        await self._client.aclose()

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
            _raise_transport_error(exc)
        try:
            content = await response.aread()
        except httpx.TransportError as exc:
            _raise_transport_error(exc)
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
            data = json.loads(content)
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

    def _emit(self, event: str, **fields: Any) -> None:
        if self._logger is not None:
            self._logger.emit(event, **fields)
