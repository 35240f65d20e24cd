"""A model URL nobody answers at is named in the run's one-line error, after the retries the policy allows."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from aeon.adapters.clock import SystemClock
from aeon.adapters.llm import _retry

from cli_harness import invoke

pytestmark = pytest.mark.usefixtures("isolated_env")


def closed_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[float]]:
    """Every wait the run asks for, recorded and not waited: the HTTP retries' and the gateway's pause."""
    asked: dict[str, list[float]] = {"http": [], "gateway": []}
    init = _retry.RetryPolicy.__init__

    async def http_sleep(seconds: float) -> None:
        asked["http"].append(seconds)

    async def gateway_sleep(self: SystemClock, seconds: float) -> None:
        asked["gateway"].append(seconds)

    def policy(self: _retry.RetryPolicy, **kwargs: Any) -> None:
        init(self, **{**kwargs, "sleep": http_sleep, "random": lambda: 0.0})

    monkeypatch.setattr(_retry.RetryPolicy, "__init__", policy)
    monkeypatch.setattr(SystemClock, "sleep", gateway_sleep)
    return asked


def test_a_refused_model_url_is_named_in_one_line_exit_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, waits: dict[str, list[float]]
) -> None:
    url = f"http://127.0.0.1:{closed_loopback_port()}/v1"
    monkeypatch.setenv("AEON_LLM_ADAPTER", "openai")
    monkeypatch.setenv("AEON_LLM_BASE_URL", url)
    monkeypatch.setenv("AEON_LLM_MODEL", "x")
    monkeypatch.setenv("AEON_LOG_FILE", str(tmp_path / "run.jsonl"))

    result = invoke("run", "hi", "--no-durable", "--quiet")

    assert result.exit_code == 4
    (line,) = result.stderr.splitlines()
    assert line.startswith("aeon: provider unavailable after 6 attempts in 2 rounds ")
    assert f"(connection refused at {url}/chat/completions; " in line
    # the policy's retries, no more: 3 attempts a round with 0.5 s and 1.0 s between, then 8 s before round two
    assert waits == {"http": [0.5, 1.0, 0.5, 1.0], "gateway": [8.0]}
