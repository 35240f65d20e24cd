"""Every recorded run's id, status and times in one query: a view over many thousands of runs asks this first and
reads through the DBOS client only the runs it has not seen in that state (DBOS's client builds a full status
object per run: about a second for 10,000)."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from aeon.adapters.durable.engine import sql_engine

# DBOS's workflow table (its documented system-database columns), in the schema DBOS puts it in: "dbos" on
# Postgres, none on SQLite. Only read here.
_COLUMNS = ("workflow_uuid", "status", "name", "created_at", "updated_at")


@dataclass(frozen=True)
class Head:
    """What changes when a run moves on: its status and DBOS's update time (epoch milliseconds)."""

    id: str
    status: str
    created_at: int
    updated_at: int


class RunHeads:
    """The heads of the workflows named `name` on the system database at `url`, newest first."""

    def __init__(self, url: str, name: str) -> None:
        self._engine = sql_engine(url)
        schema = None if url.startswith("sqlite") else "dbos"
        table = sa.Table("workflow_status", sa.MetaData(), *(sa.Column(c) for c in _COLUMNS), schema=schema)
        self._query = (
            sa.select(table.c.workflow_uuid, table.c.status, table.c.created_at, table.c.updated_at)
            .where(table.c.name == name)
            .order_by(table.c.created_at.desc(), table.c.workflow_uuid.desc())
        )

    def read(self) -> list[Head]:
        with self._engine.connect() as c:
            rows = c.execute(self._query).all()
        return [Head(id=r[0], status=r[1], created_at=int(r[2] or 0), updated_at=int(r[3] or 0)) for r in rows]

    def close(self) -> None:
        self._engine.dispose()
