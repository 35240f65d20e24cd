"""Leases: how the processes serving the batch queue tell each other they are alive, in the system database.

DBOS takes back a process's unfinished runs only when a process with the same executor id launches again (or when
its commercial Conductor says so). A worker that dies and is never started again would leave its runs pending for
ever, so every serving process keeps a lease row (`aeon_executors`), renewed several times within its grace period;
a live one re-enqueues the runs of a process whose lease has expired (DBOS's own recovery, for those executor ids),
and any live process serving the queue then takes them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import sqlalchemy as sa

from aeon.adapters.durable.tables import create_tables

_META = sa.MetaData()
EXECUTORS = sa.Table(
    "aeon_executors",
    _META,
    sa.Column("executor_id", sa.String(255), primary_key=True),
    sa.Column("beat_at", sa.Float, nullable=False),  # its last heartbeat, epoch seconds on its host
    sa.Column("expires_at", sa.Float, nullable=False),  # beat_at + its own grace: after this, others take over
)


def beat_every(grace: float) -> float:
    """How often a lease is renewed: four times per grace period, at most every 5 s."""
    return max(0.05, min(5.0, grace / 4))


@dataclass(frozen=True)
class Lease:
    executor_id: str
    beat_at: float
    expires_at: float

    def late(self, now: float) -> bool:
        """Two heartbeats missed (it renews four times per grace period): likely dead, not yet taken over."""
        return now > self.beat_at + (self.expires_at - self.beat_at) / 2


class Leases:
    """The lease table on one system database. `clock` is wall time (leases are compared across hosts)."""

    def __init__(self, engine: sa.Engine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine, self._clock = engine, clock
        create_tables(_META, engine)

    def now(self) -> float:
        return self._clock()

    def beat(self, executor_id: str, grace: float) -> None:
        now = self._clock()
        values = {"beat_at": now, "expires_at": now + grace}
        with self._engine.begin() as c:
            done = c.execute(sa.update(EXECUTORS).where(EXECUTORS.c.executor_id == executor_id).values(**values))
            if done.rowcount == 0:
                c.execute(sa.insert(EXECUTORS).values(executor_id=executor_id, **values))

    def expired(self, *, besides: str) -> list[str]:
        """The executors whose lease ran out, other than `besides` (the caller)."""
        query = sa.select(EXECUTORS.c.executor_id).where(
            EXECUTORS.c.expires_at < self._clock(), EXECUTORS.c.executor_id != besides
        )
        with self._engine.begin() as c:
            return [row[0] for row in c.execute(query)]

    def drop_expired(self, executor_id: str) -> None:
        """Forget a lease once its runs were taken over, unless it was renewed meanwhile (the process was only
        paused, or started again under its name)."""
        with self._engine.begin() as c:
            c.execute(
                sa.delete(EXECUTORS).where(
                    EXECUTORS.c.executor_id == executor_id, EXECUTORS.c.expires_at < self._clock()
                )
            )

    def release(self, executor_id: str) -> None:
        """Forget `executor_id`'s lease at once: its pending runs are nobody's to take over (a batch that leaves its
        runs waiting for approval: `aeon approve` or `aeon resume` finishes each one)."""
        with self._engine.begin() as c:
            c.execute(sa.delete(EXECUTORS).where(EXECUTORS.c.executor_id == executor_id))

    def of(self, executor_ids: Iterable[str]) -> dict[str, Lease]:
        wanted = sorted(set(executor_ids))
        if not wanted:
            return {}
        query = sa.select(EXECUTORS).where(EXECUTORS.c.executor_id.in_(wanted))
        with self._engine.begin() as c:
            return {row.executor_id: Lease(row.executor_id, row.beat_at, row.expires_at) for row in c.execute(query)}


class Keeper:
    """Renews this process's lease and takes over the runs of expired ones, on a daemon thread.

    `recover` re-enqueues the pending runs of the given executor ids (DBOS's recovery); a failure to reach the
    database is retried at the next beat rather than ending the process."""

    def __init__(self, leases: Leases, executor_id: str, grace: float, recover: Callable[[list[str]], object]) -> None:
        self._leases, self._id, self._grace, self._recover = leases, executor_id, grace, recover
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="aeon-lease", daemon=True)

    def start(self) -> None:
        self._leases.beat(self._id, self._grace)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def tick(self) -> list[str]:
        """Renew, then take over every expired executor's runs; returns the executors taken over."""
        self._leases.beat(self._id, self._grace)
        taken = self._leases.expired(besides=self._id)
        for executor_id in taken:
            self._recover([executor_id])
            self._leases.drop_expired(executor_id)
        return taken

    def _loop(self) -> None:
        while not self._stop.wait(beat_every(self._grace)):
            try:
                self.tick()
            except Exception:  # a busy or unreachable database: the next beat tries again
                continue
