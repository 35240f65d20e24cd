"""Aeon's own tables in the system database, created by whichever process comes first."""

from __future__ import annotations

import sqlalchemy as sa


def create_tables(meta: sa.MetaData, engine: sa.Engine) -> None:
    """Create `meta`'s tables unless they exist. Two processes that start at once (an `aeon approve` and an
    `aeon deny` sent together) may both see a table missing and both create it: the slower one's CREATE fails with
    "already exists" (SQLite) or a unique violation on the catalog (Postgres). That is not a failure when the table
    is there afterwards."""
    try:
        meta.create_all(engine, checkfirst=True)
    except sa.exc.DBAPIError:
        present = sa.inspect(engine)
        if not all(present.has_table(table.name) for table in meta.sorted_tables):
            raise
