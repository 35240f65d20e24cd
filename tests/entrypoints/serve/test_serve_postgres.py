"""Two `aeon serve` processes on one Postgres system database take runs from the same queue: runs POSTed to either
all end, each once, and either server shows any of them. Postgres: AEON_TEST_POSTGRES_URL when set, else a
throwaway server (tests/support/throwaway_postgres.py); skipped with the reason when neither is available."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from serve_harness import CONFIG, start
from test_serve_runs import ended, posted

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    if given := os.environ.get("AEON_TEST_POSTGRES_URL"):
        yield given
        return
    try:
        from throwaway_postgres import NoPostgres, throwaway_postgres
    except ImportError:
        pytest.skip("no Postgres: set AEON_TEST_POSTGRES_URL (no throwaway_postgres harness here)")
    try:
        with throwaway_postgres() as url:
            yield url
    except NoPostgres as exc:
        pytest.skip(f"no Postgres: {exc}")


def test_two_servers_on_one_postgres_take_runs_from_one_queue(tmp_path: Path, postgres: str) -> None:
    config = yaml.safe_load((CONFIG / "scripted-demo.yaml").read_text())
    config["llm"]["script"] = str(CONFIG / config["llm"]["script"])
    config["durable"] = {"database_url": postgres}
    (tmp_path / "pg.yaml").write_text(yaml.safe_dump(config))
    with contextlib.ExitStack() as stack:
        servers = [start(tmp_path, "--config", "pg.yaml", "--name", name) for name in ("a", "b")]
        for server in servers:
            stack.callback(server.stop)
        clients = [stack.enter_context(s.client()) for s in servers]
        ids = [posted(clients[i % 2]) for i in range(10)]
        seen = {run_id: ended(clients[(i + 1) % 2], run_id)["status"] for i, run_id in enumerate(ids)}

    assert seen == dict.fromkeys(ids, "completed")
