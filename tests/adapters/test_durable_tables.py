"""Aeon's tables in the system database: two processes starting at once both create them, and neither fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from aeon.adapters.durable.engine import sqlite_engine
from aeon.adapters.durable.tables import create_tables


def _racing(path: Path) -> tuple[sa.MetaData, sa.Engine]:
    """A table that another process creates between this one's check and its CREATE (the race, made certain)."""
    meta = sa.MetaData()
    table = sa.Table("decisions", meta, sa.Column("run_id", sa.String, primary_key=True))
    other = sqlite_engine(f"sqlite:///{path}")

    @sa.event.listens_for(table, "before_create")
    def _the_other_process_wins(*_: Any, **__: Any) -> None:
        other_meta = sa.MetaData()
        sa.Table("decisions", other_meta, sa.Column("run_id", sa.String, primary_key=True))
        other_meta.create_all(other)

    return meta, sqlite_engine(f"sqlite:///{path}")


def test_a_table_another_process_created_first_is_not_a_failure(tmp_path: Path) -> None:
    meta, engine = _racing(tmp_path / "system.sqlite")
    with pytest.raises(sa.exc.OperationalError, match="already exists"):
        meta.create_all(engine, checkfirst=True)  # what Decisions and Leases did: exit 4 for the slower command

    meta, engine = _racing(tmp_path / "fresh.sqlite")
    create_tables(meta, engine)
    assert sa.inspect(engine).has_table("decisions")


def test_a_create_that_failed_for_another_reason_still_fails(tmp_path: Path) -> None:
    meta = sa.MetaData()
    sa.Table("t", meta, sa.Column("a", sa.String, primary_key=True, server_default=sa.text("(((")))
    engine = sqlite_engine(f"sqlite:///{tmp_path / 'system.sqlite'}")
    with pytest.raises(sa.exc.OperationalError, match="syntax error"):
        create_tables(meta, engine)
