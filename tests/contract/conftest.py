"""Cassettes for the contract tests (pytest-recording + vcrpy): where they live, what is kept, how requests match."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

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


@pytest.fixture
def vcr_config() -> dict[str, Any]:
    # Record mode is pytest-recording's: "none" unless --record-mode is given, so CI only ever replays.
    return {
        # Every LLM call goes to the same URL: the body tells them apart (vcrpy ignores it by default). Not the host,
        # so a cassette recorded against a hosted provider replays with the default base URL.
        "match_on": ("method", "path", BODY_MATCHER),
        "filter_headers": SECRET_REQUEST_HEADERS,
        # Hosted providers gzip their answers; content-encoding is not kept, so store the plain body.
        "decode_compressed_response": True,
        "before_record_response": keep_allowed_response_headers,
    }


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
