"""The throwaway Postgres the tests and benches start (tests/support/throwaway_postgres.py): it serves on 127.0.0.1
while in use and leaves nothing behind; with no binaries it says what to install instead of failing obscurely."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import throwaway_postgres
from throwaway_postgres import NoPostgres
from throwaway_postgres import throwaway_postgres as started

pytestmark = pytest.mark.postgres


def test_with_no_binaries_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(throwaway_postgres, "binaries", lambda: None)
    with pytest.raises(NoPostgres, match=r"apt-get install postgresql\) or set AEON_TEST_POSTGRES_URL"), started():
        pass


def test_it_serves_on_loopback_and_is_gone_after_the_with() -> None:
    import psycopg

    if throwaway_postgres.binaries() is None:
        pytest.skip(f"no Postgres: {throwaway_postgres.INSTALL}")
    with started() as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with psycopg.connect(url) as conn:
            data = Path(conn.execute("SHOW data_directory").fetchone()[0])  # type: ignore[index]
            assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
    assert not data.exists()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0
