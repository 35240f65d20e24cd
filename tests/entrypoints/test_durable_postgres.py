"""The batch tests against a real Postgres (several workers on several hosts share one): the server named by
AEON_TEST_POSTGRES_URL, else a throwaway one from the OS binaries (the postgres_server fixture); skipped, saying why,
when there are none."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_durable_batch import killed_and_restarted, two_workers

pytestmark = pytest.mark.postgres


def test_batch_killed_and_restarted_on_postgres(tmp_path: Path, postgres_database: str) -> None:
    killed_and_restarted(tmp_path, postgres_database)


def test_two_workers_on_postgres(tmp_path: Path, postgres_database: str) -> None:
    two_workers(tmp_path, postgres_database)
