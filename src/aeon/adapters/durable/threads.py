"""Threads in the system database (table `aeon_threads`, beside DBOS's own): one row per thread, its turns and
memory one JSON document, changed in one transaction so that two runs of a thread ending at once both keep theirs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from aeon.adapters.durable.engine import database_url, redacted, sql_engine
from aeon.adapters.durable.settings import DurableSettings
from aeon.adapters.durable.tables import create_tables
from aeon.application.errors import SystemDatabaseUnavailable
from aeon.application.ports import ThreadsPort
from aeon.application.redaction import Redactor
from aeon.application.threads import Threads
from aeon.domain.threads import Thread, ThreadSummary

_META = sa.MetaData()
THREADS = sa.Table(
    "aeon_threads",
    _META,
    sa.Column("name", sa.String(100), primary_key=True),
    sa.Column("turns", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.String(40), nullable=False),  # ISO 8601, UTC
    sa.Column("body", sa.Text, nullable=False),  # the Thread as JSON (turns and memory, redacted)
)


class SqlThreads:
    """ThreadsPort on the system database at `url` (SQLite under .aeon/ or Postgres), opened on first use."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._engine: sa.Engine | None = None

    @property
    def engine(self) -> sa.Engine:
        if self._engine is None:
            try:
                engine = sql_engine(self.url)
                create_tables(_META, engine)
            except Exception as exc:
                logging.getLogger(__name__).debug("threads store", exc_info=True)
                raise SystemDatabaseUnavailable(
                    f"cannot open the system database {redacted(self.url)} for threads: {exc}"
                ) from exc
            self._engine = engine
        return self._engine

    def load(self, name: str) -> Thread | None:
        with self.engine.begin() as c:
            body = c.execute(sa.select(THREADS.c.body).where(THREADS.c.name == name)).scalar()
        return msgspec.json.decode(body, type=Thread) if body is not None else None

    def create(self, name: str, at: str) -> Thread:
        return self.update(name, at, lambda thread: thread)

    def update(self, name: str, at: str, change: Callable[[Thread], Thread]) -> Thread:
        with self.engine.begin() as c:
            # the row made first if missing: that write takes SQLite's lock for the transaction (a read alone would
            # not), and the row is there for Postgres to lock, so a second run ending at once waits for this one
            empty = Thread(name=name, created_at=at, updated_at=at)
            c.execute(_insert_missing(c, {"name": name, "turns": 0, "updated_at": at, "body": _json(empty)}))
            query = sa.select(THREADS.c.body).where(THREADS.c.name == name).with_for_update()
            thread = change(msgspec.json.decode(c.execute(query).scalar_one(), type=Thread))
            values = {"turns": len(thread.turns), "updated_at": thread.updated_at, "body": _json(thread)}
            c.execute(sa.update(THREADS).where(THREADS.c.name == name).values(**values))
        return thread

    def list(self) -> list[ThreadSummary]:
        query = sa.select(THREADS.c.name, THREADS.c.turns, THREADS.c.updated_at).order_by(
            THREADS.c.updated_at.desc(), THREADS.c.name
        )
        with self.engine.begin() as c:
            return [ThreadSummary(name=n, turns=t, updated_at=u) for n, t, u in c.execute(query)]

    def delete(self, name: str) -> bool:
        with self.engine.begin() as c:
            return bool(c.execute(sa.delete(THREADS).where(THREADS.c.name == name)).rowcount)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()


_STORES: dict[str, SqlThreads] = {}


def store_for(url: str) -> SqlThreads:
    """The process's one store on the system database at `url` (its engine's connections shared by every run)."""
    if url not in _STORES:
        _STORES[url] = SqlThreads(url)
    return _STORES[url]


def open_threads(settings: DurableSettings, redactor: Redactor, root: Path | None = None) -> Threads:
    """The threads use case on the configured system database (the SQLite file under `root`/.aeon/ by default, which
    a run with --no-durable keeps its threads in too)."""
    return Threads(store_for(database_url(settings.database_url, root or Path.cwd())), redactor)


def _insert_missing(c: sa.Connection, values: dict[str, object]) -> sa.Executable:
    """INSERT … ON CONFLICT DO NOTHING, in the dialect of the connection (SQLite or Postgres)."""
    if c.dialect.name == "postgresql":
        return postgresql.insert(THREADS).values(**values).on_conflict_do_nothing()
    return sqlite.insert(THREADS).values(**values).on_conflict_do_nothing()


def _json(thread: Thread) -> str:
    return msgspec.json.encode(thread).decode()


_PORT: type[ThreadsPort] = SqlThreads  # mypy checks SqlThreads against the port it satisfies
