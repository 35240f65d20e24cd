"""The shared HTTP layer retries like the vendor SDKs and turns every failure into a port error."""

from __future__ import annotations

import asyncio
import email.utils
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from aeon.adapters.llm._http import JsonPoster
from aeon.application.errors import LLMBadResponse, LLMRejected, LLMTooSlow, LLMUnavailable

from harness import ListLog

Step = httpx.Response | type[httpx.TransportError]
NOW = 1_700_000_000.0


class SleepRecorder:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class Script:
    """A MockTransport handler that plays one step per request: a response, or a transport error to raise."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.steps.pop(0)
        if isinstance(step, httpx.Response):
            return step
        raise step("simulated", request=request)


class TrackedStream(httpx.AsyncByteStream):
    """A response body that records whether it was closed, optionally dying halfway like a reset connection."""

    def __init__(self, data: bytes, *, fail_with: type[httpx.TransportError] | None = None) -> None:
        self.data = data
        self.fail_with = fail_with
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.data[:5]
        if self.fail_with is not None:
            raise self.fail_with("connection reset by peer")
        yield self.data[5:]

    async def aclose(self) -> None:
        self.closed = True


def ok(body: Any = None, **kwargs: Any) -> httpx.Response:
    return httpx.Response(200, json={"ok": True} if body is None else body, **kwargs)


def status(code: int, headers: dict[str, str] | None = None, body: Any = None) -> httpx.Response:
    return httpx.Response(code, headers=headers, json=body or {"error": {"message": f"status {code}"}})


def post(
    script: Script,
    *,
    max_attempts: int = 3,
    random: Callable[[], float] = lambda: 0.0,
    logger: ListLog | None = None,
) -> tuple[Any, SleepRecorder]:
    """Run one post_json; return (result or raised port error, sleep recorder)."""
    sleep = SleepRecorder()
    poster = JsonPoster(
        "http://llm.test/v1",
        max_attempts=max_attempts,
        logger=logger,
        transport=httpx.MockTransport(script),
        sleep=sleep,
        random=random,
        now=lambda: NOW,
        secrets=["sk-test-PLANTED-SECRET-123"],
    )

    async def run() -> Any:
        try:
            return await poster.post_json("/chat/completions", {"q": 1}, {"authorization": "Bearer x"})
        except (LLMUnavailable, LLMRejected, LLMBadResponse) as exc:
            return exc
        finally:
            await poster.aclose()

    return asyncio.run(run()), sleep


@pytest.mark.parametrize(
    ("error", "cause", "what"),
    [
        (httpx.ConnectTimeout, "connect timeout at http://llm.test/v1/chat/completions", "provider unavailable"),
        (httpx.ReadTimeout, "read timeout", "answers too slow"),  # the request was sent: slow, not down
        (
            httpx.ConnectError,
            "could not connect to http://llm.test/v1/chat/completions (simulated)",
            "provider unavailable",
        ),
        (httpx.ReadError, "connection error", "provider unavailable"),
        (httpx.RemoteProtocolError, "connection error", "provider unavailable"),
    ],
)
def test_transport_failures_are_retried_then_reported_unavailable(
    error: type[httpx.TransportError], cause: str, what: str
) -> None:
    script = Script(error, error, error)
    result, sleep = post(script)
    assert isinstance(result, LLMUnavailable)
    assert isinstance(result, LLMTooSlow) is (error is httpx.ReadTimeout)
    assert str(result) == f"{what} after 3 attempts ({cause}; waited 0.5 s, 1.0 s)"
    assert result.attempts == 3
    assert result.status is None
    assert len(script.requests) == 3
    assert sleep.waits == [0.5, 1.0]


def closed_loopback_port() -> int:
    """A port on 127.0.0.1 that nobody listens on: the OS handed it out and it was closed again at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_refused_connection_names_the_url_after_the_retries_the_policy_allows() -> None:
    port = closed_loopback_port()
    sleep = SleepRecorder()
    # a user and password in the endpoint never reach the message
    poster = JsonPoster(f"http://user:hunter2@127.0.0.1:{port}/v1", sleep=sleep, random=lambda: 0.0)

    async def run() -> BaseException:
        with pytest.raises(LLMUnavailable) as caught:
            await poster.post_json("/chat/completions", {"q": 1})
        await poster.aclose()
        return caught.value

    error = asyncio.run(run())
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    assert str(error) == f"provider unavailable after 3 attempts (connection refused at {url}; waited 0.5 s, 1.0 s)"
    assert sleep.waits == [0.5, 1.0]  # the policy's three attempts, as for any connection error


def test_a_host_that_cannot_be_resolved_names_the_url_and_the_systems_reason() -> None:
    def unresolved(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno -2] Name or service not known", request=request) from socket.gaierror(
            -2, "Name or service not known"
        )

    sleep = SleepRecorder()
    poster = JsonPoster("http://llm.test/v1", transport=httpx.MockTransport(unresolved), sleep=sleep)

    async def run() -> BaseException:
        with pytest.raises(LLMUnavailable) as caught:  # a key in the query (as some providers take it) stays out
            await poster.post_json("/chat/completions?key=s3cret", {"q": 1})
        await poster.aclose()
        return caught.value

    error = asyncio.run(run())
    assert "could not connect to http://llm.test/v1/chat/completions (Name or service not known)" in str(error)
    assert "s3cret" not in str(error)


def test_a_connection_reset_then_success_returns_the_answer() -> None:
    script = Script(httpx.ConnectError, ok())
    (data, _), sleep = post(script)
    assert data == {"ok": True}
    assert len(script.requests) == 2
    assert sleep.waits == [0.5]


@pytest.mark.parametrize("code", [408, 409, 429, 500, 502, 503, 504, 529])
def test_retryable_statuses_are_retried(code: int) -> None:
    script = Script(status(code), ok())
    (data, _), sleep = post(script)
    assert data == {"ok": True}
    assert len(script.requests) == 2
    assert sleep.waits == [0.5]


def test_anthropic_overload_529_is_retried() -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    script = Script(status(529, body=overloaded), status(529, body=overloaded), ok())
    (data, _), sleep = post(script)
    assert data == {"ok": True}
    assert sleep.waits == [0.5, 1.0]


@pytest.mark.parametrize("code", [400, 401, 403, 404, 413, 422, 418])
def test_non_retryable_statuses_cost_exactly_one_request(code: int) -> None:
    script = Script(status(code, body={"error": {"message": "you did it wrong"}}))
    result, sleep = post(script)
    assert isinstance(result, LLMRejected)
    assert str(result) == f"rejected: HTTP {code} you did it wrong"
    assert result.status == code
    assert len(script.requests) == 1
    assert sleep.waits == []


def test_rejection_without_json_body_quotes_a_short_text_snippet() -> None:
    script = Script(httpx.Response(403, text="<html>\n  <body>Forbidden " + "x" * 500 + "</body></html>"))
    result, _ = post(script)
    assert isinstance(result, LLMRejected)
    assert str(result).startswith("rejected: HTTP 403 <html> <body>Forbidden xxx")
    assert len(str(result)) < 250


def test_failures_then_success_costs_exactly_three_requests() -> None:
    script = Script(status(503), status(503), ok())
    (data, headers), sleep = post(script)
    assert data == {"ok": True}
    assert headers["content-type"] == "application/json"
    assert len(script.requests) == 3
    assert sleep.waits == [0.5, 1.0]


def test_exhaustion_raises_unavailable_after_exactly_three_attempts() -> None:
    script = Script(status(503), status(503), status(503), ok())
    result, sleep = post(script)
    assert isinstance(result, LLMUnavailable)
    assert str(result) == "provider unavailable after 3 attempts (HTTP 503; waited 0.5 s, 1.0 s)"
    assert result.waits == (0.5, 1.0) and result.cause == "HTTP 503"
    assert (result.status, result.attempts) == (503, 3)
    assert len(script.requests) == 3
    assert sleep.waits == [0.5, 1.0]


def test_max_attempts_is_configurable() -> None:
    script = Script(status(500), status(500), status(500), status(500), status(500))
    result, sleep = post(script, max_attempts=5)
    assert isinstance(result, LLMUnavailable)
    assert result.attempts == 5
    assert len(script.requests) == 5
    assert len(sleep.waits) == 4


def test_a_single_attempt_never_sleeps() -> None:
    script = Script(status(503))
    result, sleep = post(script, max_attempts=1)
    assert isinstance(result, LLMUnavailable)
    assert sleep.waits == []


def test_backoff_doubles_from_half_a_second_and_caps_at_eight() -> None:
    script = Script(*(status(503) for _ in range(7)))
    _, sleep = post(script, max_attempts=7)
    assert sleep.waits == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


def test_backoff_jitter_shrinks_the_wait_by_at_most_a_quarter() -> None:
    script = Script(status(503), status(503), status(503))
    _, sleep = post(script, random=lambda: 1.0)
    assert sleep.waits == [0.375, 0.75]


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
        ({"retry-after": email.utils.formatdate(NOW + 7, usegmt=True)}, 7.0),
        ({"retry-after": "60"}, 60.0),
    ],
)
def test_429_honours_a_sane_retry_after(headers: dict[str, str], wait: float) -> None:
    script = Script(status(429, headers), ok())
    (data, _), sleep = post(script)
    assert data == {"ok": True}
    assert sleep.waits == [wait]


@pytest.mark.parametrize(
    "value",
    ["soon", "61", "3600", "0", "-5", "nan", "inf", email.utils.formatdate(NOW - 30, usegmt=True)],
)
def test_unusable_or_excessive_retry_after_falls_back_to_backoff(value: str) -> None:
    script = Script(status(429, {"retry-after": value}), ok())
    _, sleep = post(script)
    assert sleep.waits == [0.5]


def test_x_should_retry_true_makes_a_400_retryable() -> None:
    script = Script(status(400, {"x-should-retry": "true"}), ok())
    (data, _), sleep = post(script)
    assert data == {"ok": True}
    assert len(script.requests) == 2
    assert sleep.waits == [0.5]


def test_x_should_retry_false_makes_a_503_final() -> None:
    script = Script(status(503, {"x-should-retry": "false"}), ok())
    result, sleep = post(script)
    assert isinstance(result, LLMRejected)
    assert result.status == 503
    assert len(script.requests) == 1
    assert sleep.waits == []


@pytest.mark.parametrize("body", [b'{"choices": [{"message": {"content": "hel', b"<html><body>502</body></html>", b""])
def test_a_2xx_that_is_not_json_is_a_bad_response_and_not_retried(body: bytes) -> None:
    script = Script(httpx.Response(200, content=body), ok())
    result, _ = post(script)
    assert isinstance(result, LLMBadResponse)
    assert "HTTP 200" in str(result)
    assert len(script.requests) == 1


def test_a_2xx_json_array_is_a_bad_response() -> None:
    result, _ = post(Script(httpx.Response(200, json=[1, 2])))
    assert isinstance(result, LLMBadResponse)


def test_every_retry_and_the_give_up_are_logged_with_their_waits() -> None:
    logger = ListLog()
    script = Script(status(429, {"retry-after": "3"}), httpx.ReadTimeout, status(502))
    post(script, logger=logger)
    assert logger.events == [
        ("llm_retry", {"attempt": 1, "cause": "HTTP 429", "status": 429, "wait_seconds": 3.0}),
        ("llm_retry", {"attempt": 2, "cause": "read timeout", "status": None, "wait_seconds": 1.0}),
        ("llm_giveup", {"attempts": 3, "cause": "HTTP 502", "status": 502, "waits": [3.0, 1.0]}),
    ]


def test_failed_response_bodies_are_closed_before_the_next_attempt() -> None:
    streams = [TrackedStream(b'{"error": {"message": "busy"}}') for _ in range(3)]
    script = Script(*(httpx.Response(503, stream=stream) for stream in streams))
    result, _ = post(script)
    assert isinstance(result, LLMUnavailable)
    assert [stream.closed for stream in streams] == [True, True, True]


def test_a_body_cut_by_a_connection_reset_is_closed_and_retried() -> None:
    broken = TrackedStream(b'{"ok": true}', fail_with=httpx.ReadError)
    script = Script(httpx.Response(200, stream=broken), ok())
    (data, _), sleep = post(script)
    assert data == {"ok": True}
    assert broken.closed
    assert sleep.waits == [0.5]


def test_aclose_closes_the_underlying_transport() -> None:
    class ClosingTransport(httpx.MockTransport):
        closed = False

        async def aclose(self) -> None:
            self.closed = True

    transport = ClosingTransport(Script(ok()))
    poster = JsonPoster("http://llm.test", transport=transport)
    asyncio.run(poster.aclose())
    assert transport.closed


def test_an_unsupported_url_scheme_is_rejected_without_retry() -> None:
    poster = JsonPoster("ftp://llm.test", sleep=SleepRecorder())

    async def run() -> None:
        try:
            await poster.post_json("/x", {})
        finally:
            await poster.aclose()

    with pytest.raises(LLMRejected, match="could not be sent"):
        asyncio.run(run())


def test_secrets_echoed_by_the_provider_are_blanked_from_errors() -> None:
    body = {"error": {"message": "Incorrect API key provided: sk-test-PLANTED-SECRET-123."}}
    result, _ = post(Script(status(401, body=body)))
    assert isinstance(result, LLMRejected)
    assert "sk-test-PLANTED-SECRET-123" not in str(result)
    assert str(result) == "rejected: HTTP 401 Incorrect API key provided: ***."


def test_max_attempts_below_one_is_a_construction_error() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        JsonPoster("http://llm.test", max_attempts=0)
