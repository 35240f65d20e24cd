"""DurableEngine: one process's DBOS — the system database (SQLite under .aeon/ or Postgres), launch, the batch
queue, and a client for looking at recorded runs without executing anything."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, cast

import sqlalchemy as sa
from dbos import DBOS, DBOSClient, DBOSConfig
from sqlalchemy import event

from aeon.adapters.durable.approval import Decisions
from aeon.adapters.durable.lease import Keeper, Leases
from aeon.application.errors import InputError, SystemDatabaseUnavailable

APP_NAME = "aeon"
# One fixed version: DBOS recovers and dequeues only workflows of its own application version, and every Aeon
# process on a system database must be able to take over every other's runs. It changes when what a run records
# changes (2: one checkpoint per pass, no step for a pure tool's call nor a "begin" step; 3: outputs deferred and
# carried by the next written step, checkpoints among them), so that no process executes a run again over a record
# of another shape.
APP_VERSION = "aeon-durable-3"
BATCH_QUEUE = "aeon-batch"
DEFAULT_DATABASE = Path(".aeon") / "aeon.sqlite"
DBOS_CONSOLE = "__dbos_console_log_handler__"  # the name DBOS gives its console log handler


@dataclass(frozen=True)
class QueueLimits:
    """At most `concurrency` runs at once across every process serving the queue, at most `per_minute` started per
    minute. A worker (concurrency None) keeps what the batch set."""

    concurrency: int | None = None
    per_minute: float | None = None


def _queue_options(limits: QueueLimits) -> dict[str, Any]:
    per_minute = limits.per_minute
    return {
        "global_concurrency": limits.concurrency,
        "limiter": {"limit": max(1, round(per_minute)), "period": 60.0} if per_minute else None,
        "polling_interval_sec": 0.1,
        "on_conflict": "always_update" if limits.concurrency is not None else "never_update",
    }


def database_url(configured: str | None, root: Path) -> str:
    """The system database: the configured URL (Postgres for several hosts), else SQLite under `root`/.aeon/."""
    if configured and configured.strip():
        return configured.strip()
    path = (root / DEFAULT_DATABASE).resolve()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SystemDatabaseUnavailable(
            f"cannot create {path.parent} for the system database of durable runs: {exc.strerror or exc} "
            "(--no-durable, or durable.enabled: false, runs without it)"
        ) from exc
    return f"sqlite:///{path}"


def recorded_database(configured: str | None, root: Path) -> str:
    """The system database whose runs are shown, made by none: the configured URL, else the SQLite file under
    `root`/.aeon/; InputError when there is none yet (`aeon run` makes it)."""
    if configured and configured.strip():
        return configured.strip()
    path = (root / DEFAULT_DATABASE).resolve()
    if not path.is_file():
        raise InputError(
            f"no durable runs recorded here yet: there is no system database {path} (aeon run records each run "
            "there; run aeon ui in the folder your runs ran in, or name a database with AEON_DATABASE_URL)"
        )
    return database_url(configured, root)


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"


class DurableEngine:
    """DBOS for this process. `executor_id` names the process to DBOS: at launch DBOS takes back the runs this same
    executor left unfinished (a restarted batch or worker), and only those — so a one-off `aeon run` uses a fresh id
    and never picks up another process's runs. A process serving the batch queue (`grace` set) also keeps a lease
    and takes over the runs of any other serving process whose lease expired (unheard for its `grace` seconds).
    `listen` names the queues this process takes runs from, besides DBOS's internal queue and `own_queue`, which
    only this process serves (a run resumed here goes there)."""

    def __init__(
        self,
        url: str,
        *,
        executor_id: str,
        listen: Sequence[str] = (),
        queues: Mapping[str, QueueLimits] | None = None,
        grace: float | None = None,
    ) -> None:
        self.url, self.executor_id, self.listen = url, executor_id, list(listen)
        self._queues = dict(queues or {})
        self._client: DBOSClient | None = None
        self._leases: Leases | None = None
        self._decisions: Decisions | None = None
        self._grace, self._keeper = grace, cast(Keeper | None, None)

    def __enter__(self) -> DurableEngine:
        # Queues known before launch are served at once; one registered after launch waits for DBOS's next look
        # for new queues (a second). A fresh database has no schema before the first launch: then register after.
        early = {name: limits for name, limits in self._queues.items() if self._register_early(name, limits)}
        config: DBOSConfig = {
            "name": APP_NAME,
            "system_database_url": self.url,
            "system_database_engine": sqlite_engine(self.url) if self.url.startswith("sqlite") else None,
            "application_version": APP_VERSION,
            "executor_id": self.executor_id,
            "log_level": "ERROR",
            # DBOS.destroy joins this poller, so a process waits up to one interval to end (0.1 s: about 75 ms of
            # `aeon run`); a pending recv on SQLite is checked this often (one indexed query).
            "notification_listener_polling_interval_sec": 0.02,
            "scheduler_polling_interval_sec": 5.0,  # a schedule added, paused or removed is seen within 5 s
        }
        _console_to_stderr()
        DBOS(config=config)
        DBOS.listen_queues([*self.listen, self.own_queue])
        dbos_log = logging.getLogger("dbos")
        level = dbos_log.level
        dbos_log.setLevel(logging.CRITICAL)  # DBOS logs a failed launch with its traceback; ours is one line
        try:
            DBOS.launch()
        except Exception as exc:
            DBOS.destroy()
            raise SystemDatabaseUnavailable(
                f"cannot open the system database {redacted(self.url)} for durable runs: {_cause(exc)} "
                "(--no-durable, or durable.enabled: false, runs without it)"
            ) from exc
        finally:
            dbos_log.setLevel(level)
        for name, limits in self._queues.items():
            if name not in early:
                self.queue(name, concurrency=limits.concurrency, per_minute=limits.per_minute)
        if self._grace is not None:
            self._keeper = Keeper(self.leases, self.executor_id, self._grace, DBOS._recover_pending_workflows)
            self._keeper.start()
        return self

    def _register_early(self, name: str, limits: QueueLimits) -> bool:
        try:
            self.client.register_queue(name, application_name=APP_NAME, **_queue_options(limits))
        except Exception:  # no schema yet (a database never launched on): registered after launch instead
            return False
        return True

    @property
    def own_queue(self) -> str:
        return f"aeon-own-{self.executor_id}"

    def leave(self) -> None:
        """Before this process leaves runs waiting for approval: no more heartbeats, and no lease left to expire (a
        worker taking them over would wait in their place; the one who approves finishes them instead)."""
        if self._keeper is not None:
            self._keeper.stop()
            self.leases.release(self.executor_id)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        # the lease is left to expire, not dropped: runs this process leaves pending are then taken over
        if self._keeper is not None:
            self._keeper.stop()
        if self._client is not None:
            self._client.destroy()
        DBOS.destroy()

    def queue(self, name: str, *, concurrency: int | None = None, per_minute: float | None = None) -> None:
        """Register a queue: at most `concurrency` runs at once across every process serving it, at most
        `per_minute` started per minute. A worker (concurrency None) keeps what the batch set."""
        DBOS.register_queue(name, **_queue_options(QueueLimits(concurrency=concurrency, per_minute=per_minute)))

    @property
    def client(self) -> DBOSClient:
        if self._client is None:
            self._client = DBOSClient(system_database_url=self.url)
        return self._client

    @property
    def leases(self) -> Leases:
        """The heartbeats of the processes serving the batch queue (see adapters/durable/lease)."""
        if self._leases is None:
            self._leases = Leases(sql_engine(self.url))
        return self._leases

    @property
    def decisions(self) -> Decisions:
        """The decisions on approval requests, each recorded as it is sent (see adapters/durable/approval)."""
        if self._decisions is None:
            self._decisions = Decisions(sql_engine(self.url), self.client)
        return self._decisions

    def step_names(self, run_id: str) -> list[str]:
        """The names of a run's recorded steps, in order; read outside any workflow, so it is never recorded."""
        return [s["function_name"] for s in self.client.list_workflow_steps(run_id, load_output=False)]

    def steps(self, run_id: str) -> list[dict[str, Any]]:
        return [dict(s) for s in self.client.list_workflow_steps(run_id)]


def _cause(exc: BaseException) -> str:
    """The first line of the innermost error's message: what SQLite or Postgres said."""
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    lines = str(exc).strip().splitlines()
    return " ".join(lines[0].split()) if lines else type(exc).__name__


def _console_to_stderr() -> None:
    """DBOS's console log handler writes to the stderr of the moment it was made, once per process: point it at
    this one (a caller, a test runner, may have swapped sys.stderr since, and closed the old one)."""
    for handler in logging.getLogger("dbos").handlers:
        if handler.name == DBOS_CONSOLE and isinstance(handler, logging.StreamHandler):
            handler.stream = sys.stderr  # not setStream: it flushes the old stream, which may be closed


def sqlite_engine(url: str) -> sa.Engine:
    """DBOS's SQLite engine (IMMEDIATE transactions, a long busy timeout, foreign keys) in WAL mode with
    synchronous=NORMAL: a commit is on disk for any process once it returns and survives the process being killed;
    only an OS crash or power loss may lose the last commits. DBOS's default (a rollback journal, fsync on every
    commit) costs about 10 ms per recorded step on this kind of disk; this costs well under one."""
    engine = sa.create_engine(url)

    @event.listens_for(engine, "connect")
    def configure(dbapi_conn: Any, _: Any) -> None:
        dbapi_conn.isolation_level = None  # autocommit for the pragmas, then IMMEDIATE as DBOS wants
        dbapi_conn.execute("PRAGMA journal_mode=WAL")
        dbapi_conn.execute("PRAGMA synchronous=NORMAL")
        dbapi_conn.isolation_level = "IMMEDIATE"
        dbapi_conn.execute("PRAGMA busy_timeout=30000")
        dbapi_conn.execute("PRAGMA foreign_keys=ON")

    return engine


def sql_engine(url: str) -> sa.Engine:
    """An SQLAlchemy engine on the system database, for Aeon's own table there (the leases)."""
    if url.startswith("sqlite"):
        return sqlite_engine(url)
    return sa.create_engine(sa.make_url(url).set(drivername="postgresql+psycopg"), pool_pre_ping=True)


def open_client(url: str) -> DBOSClient:
    """A client on the system database that executes nothing (for `aeon runs` and looking runs up);
    SystemDatabaseUnavailable, in one line, when the database cannot be opened."""
    dbos_log = logging.getLogger("dbos")
    level = dbos_log.level
    dbos_log.setLevel(logging.CRITICAL)  # DBOS logs a failed connection itself; ours is one line
    try:
        return DBOSClient(system_database_url=url)
    except Exception as exc:
        raise SystemDatabaseUnavailable(
            f"cannot open the system database {redacted(url)} for durable runs: {_cause(exc)} "
            "(--no-durable, or durable.enabled: false, runs without it)"
        ) from exc
    finally:
        dbos_log.setLevel(level)
