"""Fixtures shared by the unit tests."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# One Hypothesis profile for every property test. No deadline: on a loaded 2-core CI one example can take seconds
# (a full run once stopped on DeadlineExceeded in the adaptive-depth properties), and a property that is right is
# not wrong because the machine is busy; the same goes for the too_slow health check. Per test only max_examples.
settings.register_profile("aeon", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.load_profile("aeon")

# Runs are durable by default (DBOS, a system database in the working directory, ~1 s of DBOS import per process):
# tests that are not about durability run in-process only. The durable tests ask for it (--durable, or a
# subprocess environment without AEON_* variables: tests/support/durable_harness.py).
os.environ["AEON_DURABLE"] = "false"
# A local model started through the config keeps no slot files in the user's cache folder during tests; the tests of
# the slot cache give it a folder of their own.
os.environ["AEON_LOCAL_SLOT_CACHE_MB"] = "0"
# ... and leaves no server running in it after the run: the tests of the kept server give it a folder of their own.
os.environ["AEON_LOCAL_KEEP_ALIVE"] = "0"
_SUITE_VARIABLES = ("AEON_DURABLE", "AEON_LOCAL_SLOT_CACHE_MB", "AEON_LOCAL_KEEP_ALIVE")


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No AEON_* or provider key from the developer's shell (the suite's own variables stay); a stray default log
    lands in tmp_path, not the repo."""
    for name in list(os.environ):
        own = name in _SUITE_VARIABLES
        if (name.startswith("AEON_") and not own) or name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def forget_imports() -> Iterator[None]:
    """Modules a test imports (users' tool modules written into tmp_path) are forgotten afterwards."""
    before = set(sys.modules)
    path = list(sys.path)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]
    sys.path[:] = path


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A Postgres server's URL for the tests that need one: AEON_TEST_POSTGRES_URL when set, else a throwaway server
    from the OS binaries (tests/support/throwaway_postgres.py) for the session; skips, saying why, when neither."""
    from throwaway_postgres import NoPostgres, throwaway_postgres

    given = os.environ.get("AEON_TEST_POSTGRES_URL", "")
    if given:
        yield given
        return
    try:
        with throwaway_postgres() as url:
            yield url
    except NoPostgres as exc:
        pytest.skip(f"no Postgres: {exc}")


@pytest.fixture
def postgres_database(postgres_server: str) -> Iterator[str]:
    """A fresh database on the session's Postgres for one test, dropped afterwards."""
    from throwaway_postgres import fresh_database

    with fresh_database(postgres_server) as url:
        yield url
