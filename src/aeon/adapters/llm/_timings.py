"""An httpx transport that reads llama-server's own `timings` off each answered chat completion and logs them."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import msgspec

from aeon.domain.log_llm import LocalCallTimingsRecord


class _Timings(msgspec.Struct):
    prompt_n: int = 0
    prompt_ms: float = 0.0
    cache_n: int = 0
    predicted_n: int = 0
    predicted_ms: float = 0.0


class _Reply(msgspec.Struct):
    timings: _Timings | None = None


_DECODER = msgspec.json.Decoder(_Reply)


def timings_record(body: bytes) -> LocalCallTimingsRecord | None:
    """The record for one chat-completion body; None when it carries no timings or is not JSON."""
    try:
        t = _DECODER.decode(body).timings
    except msgspec.DecodeError:  # the caller's parser says what is wrong with the body
        return None
    if t is None:
        return None
    return LocalCallTimingsRecord(
        prompt_tokens=t.prompt_n,
        prompt_ms=round(t.prompt_ms, 1),
        cached_tokens=t.cache_n,
        generated_tokens=t.predicted_n,
        generation_ms=round(t.predicted_ms, 1),
    )


class TimingsTransport(httpx.AsyncBaseTransport):
    """Passes every request to `inner`; for a 200 answer to /chat/completions, reads its body once and hands the
    timings record to `emit` (the body is returned unchanged)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, emit: Callable[[LocalCallTimingsRecord], None]) -> None:
        self._inner = inner
        self._emit = emit

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        if response.status_code != 200 or not request.url.path.endswith("/chat/completions"):
            return response
        body = await response.aread()
        record = timings_record(body)
        if record is not None:
            self._emit(record)
        headers = [(k, v) for k, v in response.headers.items() if k not in ("content-encoding", "content-length")]
        return httpx.Response(response.status_code, headers=headers, content=body, extensions=response.extensions)

    async def aclose(self) -> None:
        await self._inner.aclose()
