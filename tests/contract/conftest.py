"""Cassettes for the contract tests (pytest-recording + vcrpy): where they live, what is kept, how requests match."""

from __future__ import annotations

import os
import socket
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from cassette_format import (
    BODY_MATCHER,
    SECRET_REQUEST_HEADERS,
    configure_vcr,
    keep_allowed_response_headers,
    unplayed,
)
from vcr import VCR
from vcr.cassette import Cassette

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes"
_CALL_PASSED = pytest.StashKey[bool]()


def pytest_recording_configure(config: pytest.Config, vcr: VCR) -> None:
    configure_vcr(vcr)


# What a recording of each HTTP adapter talks to (docs/recording.md): the endpoint's variable, its default (the local
# llama-server of scripts/serve-local-model.sh) and the key a hosted endpoint needs.
RECORDED_ENDPOINTS = {
    "openai": ("AEON_CONTRACT_OPENAI_BASE_URL", "http://127.0.0.1:8089/v1", "OPENAI_API_KEY"),
    "anthropic": ("AEON_CONTRACT_ANTHROPIC_BASE_URL", "http://127.0.0.1:8089", "ANTHROPIC_API_KEY"),
}
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
CONNECT_SECONDS = 3.0


@pytest.fixture
def vcr_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    # Record mode is pytest-recording's: "none" unless --record-mode is given, so CI only ever replays.
    # pytest-recording asks for this before it opens the cassette, and --record-mode=rewrite deletes the cassette on
    # opening it: a recording that cannot reach its endpoint must stop here, while the committed cassette is intact.
    _refuse_a_recording_that_cannot_happen(request)
    return {
        # Every LLM call goes to the same URL: the body tells them apart (vcrpy ignores it by default). Not the host,
        # so a cassette recorded against a hosted provider replays with the default base URL.
        "match_on": ("method", "path", BODY_MATCHER),
        "filter_headers": SECRET_REQUEST_HEADERS,
        # Hosted providers gzip their answers; content-encoding is not kept, so store the plain body.
        "decode_compressed_response": True,
        "before_record_response": keep_allowed_response_headers,
    }


def _refuse_a_recording_that_cannot_happen(request: pytest.FixtureRequest) -> None:
    """Fail a test, with one line and before its cassette is touched, when it would record without the endpoint's key
    (a hosted one) or without a server listening there. Its adapter is its `adapter` parameter, else the one its name
    says (anthropic), else openai: every other recording goes through the OpenAI-compatible wire."""
    mode = request.config.getoption("--record-mode") or "none"
    if mode == "none" or request.node.get_closest_marker("vcr") is None:
        return
    borrowed = request.node.get_closest_marker("default_cassette")
    if borrowed is not None:
        pytest.fail(
            f"not recording: this test replays another test's cassette ({borrowed.args[0]}); re-record that test",
            pytrace=False,
        )
    params = getattr(request.node, "callspec", None)
    adapter = params.params.get("adapter") if params is not None else None
    if adapter not in RECORDED_ENDPOINTS:
        adapter = "anthropic" if "anthropic" in request.node.name else "openai"
    url_var, default_url, key_var = RECORDED_ENDPOINTS[adapter]
    url = os.environ.get(url_var) or default_url
    keep = f"the committed cassette is kept ({mode} would have replaced it)"
    parts = urlsplit(url)
    host = parts.hostname or ""
    if host not in LOOPBACK and not os.environ.get(key_var):
        pytest.fail(f"not recording: {key_var} is not set for {url}; {keep}", pytrace=False)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=CONNECT_SECONDS).close()
    except OSError as exc:
        hint = " (start it: scripts/serve-local-model.sh)" if host in LOOPBACK else ""
        reason = exc.strerror or type(exc).__name__
        pytest.fail(f"not recording: nothing answers at {url}{hint}: {reason}; {keep}", pytrace=False)


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    """tests/cassettes/<test module>/<test>.yaml, next to no test code."""
    return str(CASSETTES / request.path.stem)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if report.when == "call":
        item.stash[_CALL_PASSED] = report.passed
    return report


@pytest.fixture(autouse=True)
def _replay_uses_every_recorded_interaction(request: pytest.FixtureRequest, vcr: Cassette | None) -> Iterator[None]:
    """A test that replays fewer requests than its cassette holds fails: the cassette no longer describes it."""
    yield
    if vcr is None or not request.node.stash.get(_CALL_PASSED, False):
        return  # no cassette, or the test already failed for a better reason
    missing = unplayed(vcr)
    if missing:
        pytest.fail(
            f"cassette {vcr.path} holds {len(missing)} interaction(s) this test never requested: "
            f"{', '.join(missing)}. Re-record it (--record-mode=rewrite) or make the test send them.",
            pytrace=False,
        )
