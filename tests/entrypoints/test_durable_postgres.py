"""The batch tests against a real Postgres (several workers on several hosts share one): run only when
AEON_TEST_POSTGRES_URL names a server (e.g. postgresql://postgres@127.0.0.1:5432/postgres); skipped otherwise."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_durable_batch import killed_and_restarted, two_workers

SERVER = os.environ.get("AEON_TEST_POSTGRES_URL", "")
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not SERVER, reason="no Postgres: set AEON_TEST_POSTGRES_URL to run these"),
]


@pytest.fixture
def database() -> Iterator[str]:
    """A fresh database on the server for one test, dropped afterwards."""
    import psycopg

    name = f"aeon_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield SERVER.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def test_batch_killed_and_restarted_on_postgres(tmp_path: Path, database: str) -> None:
    killed_and_restarted(tmp_path, database)


def test_two_workers_on_postgres(tmp_path: Path, database: str) -> None:
    two_workers(tmp_path, database)
