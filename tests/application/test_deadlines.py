"""Loops that always stop: a trickling provider, a long Retry-After and a provider down for good cannot outlast the
run's caps, and every wait is said out loud.

The trickling provider is a real HTTP server on loopback that sends its headers and then one byte every 50 ms, so
httpx's read timeout (the gap between two bytes) never fires. Its deadlines are fractions of a second.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import respx
import yaml
from typer.testing import CliRunner

from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.application.errors import LLMUnavailable
from aeon.application.kernel.run import RunSettings
from aeon.application.llm.gateway import PHASE_RETRY_WAIT, LLMGateway
from aeon.domain.llm import Completion, Message
from aeon.domain.progress import LLMRetryRound
from aeon.entrypoints.cli import app
from aeon.testing import FakeClock, FunctionLLM, ListProgress, new_run, orchestrator

ANSWER = json.dumps({"choices": [{"message": {"content": "hello"}, "finish_reason": "stop"}]}).encode()


class TricklingServer:
    """Answers every POST with 200 headers at once, then the body one byte every `gap` seconds."""

    def __init__(self, gap: float = 0.05) -> None:
        self.gap = gap
        self.requests = 0
        self._loop = asyncio.new_event_loop()
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._sock.listen()  # before __enter__ returns: a client that connects first is queued, not refused
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> TricklingServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._handle, sock=self._sock))
        self._loop.run_forever()
        server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-"))
        await reader.readexactly(length)
        self.requests += 1
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(ANSWER))
        try:
            for byte in ANSWER:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(self.gap)
        except ConnectionError:
            pass
        writer.close()


@pytest.fixture
def trickle() -> Iterator[TricklingServer]:
    with TricklingServer() as server:
        yield server


def test_an_attempt_gets_a_total_deadline_not_just_one_between_bytes(trickle: TricklingServer) -> None:
    llm = OpenAICompatLLM(trickle.base_url, "m", read_timeout=0.4, max_attempts=2, sleep=FakeClock().sleep)

    async def call() -> Completion:
        try:
            return await llm.complete([Message(role="user", content="hi")])
        finally:
            await llm.aclose()

    began = time.monotonic()
    with pytest.raises(LLMUnavailable, match=r"after 2 attempts \(no complete answer within 0.4 s"):
        asyncio.run(call())
    assert time.monotonic() - began < 2.0  # two 0.4 s attempts; the whole answer would take over 3 s per attempt
    # the server's thread counts a request once it has read its body: on a loaded machine that may lag the client
    settled = time.monotonic() + 5.0
    while trickle.requests < 2 and time.monotonic() < settled:
        time.sleep(0.01)
    assert trickle.requests == 2


def test_max_seconds_ends_a_run_whose_provider_trickles_forever(
    trickle: TricklingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = {
        "llm": {"adapter": "openai", "base_url": trickle.base_url, "model": "m", "read_timeout": 30},
        "run": {"max_seconds": 0.5},
        "log": {"path": str(tmp_path / "run.jsonl")},
    }
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(config), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    began = time.monotonic()
    result = CliRunner().invoke(app, ["run", "say hello", "--config", str(cfg), "--json", "-q"])
    assert time.monotonic() - began < 3.0  # the cap is 0.5 s; one trickled answer alone takes over 3 s
    doc = json.loads(result.stdout)
    assert result.exit_code == 3 and doc["status"] == "ttl_expired"
    assert "max_seconds (0.5) ran out during the LLM call for profile" in doc["ttl_expiration"]["message"]
    records = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert records[-1]["event"] == "run_end" and records[-1]["llm_calls"] == 1  # the cut call still counts


def test_max_seconds_cuts_a_long_retry_after_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[httpx.Request] = []

    def limited(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(429, headers={"retry-after": "30"}, json={"error": {"message": "slow down"}})

    config = {
        "llm": {"adapter": "openai", "base_url": "http://limited.test/v1", "model": "m"},
        "run": {"max_seconds": 0.5},
        "log": {"path": str(tmp_path / "run.jsonl")},
    }
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(config), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    began = time.monotonic()
    with respx.mock() as router:
        router.post("http://limited.test/v1/chat/completions").mock(side_effect=limited)
        result = CliRunner().invoke(app, ["run", "say hello", "--config", str(cfg), "--json"])
    assert time.monotonic() - began < 3.0 and len(sent) == 1  # not 30 s: the run ended inside the wait
    assert result.exit_code == 3 and json.loads(result.stdout)["status"] == "ttl_expired"
    assert "HTTP 429 from the provider: attempt 2 of 3 in 30.0 s" in result.stderr  # the wait was shown


def down_for_good() -> FunctionLLM:
    """A model whose provider stays unavailable: each call is one round of 3 attempts, the last asking for 12 s."""
    return FunctionLLM(
        lambda call: LLMUnavailable(
            "provider unavailable after 3 attempts (HTTP 429; waited 0.5 s, 1.0 s)",
            status=429,
            attempts=3,
            cause="HTTP 429",
            waits=(0.5, 1.0),
            retry_after=12.0,
        )
    )


def test_a_provider_down_for_good_gets_one_paused_extra_round_and_an_error_that_counts_everything(
    tmp_path: Path,
) -> None:
    clock, progress, llm = FakeClock(), ListProgress(), down_for_good()
    log = JsonlEventLog(tmp_path / "run.jsonl")
    orch = orchestrator(llm, run=RunSettings(evaluate=False), log=log, progress=progress, clock=clock)
    result = asyncio.run(orch.run("say hello"))
    log.close()
    assert len(llm.calls) == 2  # the HTTP adapter's round, then the phase contract's one more round: 6 requests in all
    assert clock.slept == [12.0]  # the provider's Retry-After, not an immediate re-send
    assert result.error is not None
    assert (
        "after 6 attempts in 2 rounds (HTTP 429; waited 0.5 s, 1.0 s, 0.5 s, 1.0 s within rounds, 12.0 s between)"
        in (result.error.message)
    )
    assert progress.of(LLMRetryRound) == [
        LLMRetryRound(purpose="plan", attempts=3, cause="HTTP 429", wait_seconds=12.0)
    ]
    retry = next(
        json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines() if "llm_retry_round" in line
    )
    assert retry["wait_seconds"] == 12.0


def test_without_retry_after_the_extra_round_waits_the_longest_backoff() -> None:
    down = LLMUnavailable("provider unavailable after 3 attempts (HTTP 503)", status=503, attempts=3)
    clock, llm = FakeClock(), FunctionLLM(lambda call: down)
    run = new_run("r", settings=RunSettings(ttl=1, max_llm_calls=5), clock=clock)
    with pytest.raises(LLMUnavailable, match="after 6 attempts in 2 rounds"):
        asyncio.run(LLMGateway(llm, run).complete("plan", [Message(role="user", content="x")]))
    assert clock.slept == [PHASE_RETRY_WAIT] == [8.0]
    assert len(llm.calls) == 2 and run.state.budget.llm_calls == 2  # both rounds count against the call cap
