"""Leases in the system database (SQLite): a serving process renews its own; once another's has expired, a live
one takes that process's runs over (DBOS recovery for its executor id) and forgets the lease, unless renewed."""

from __future__ import annotations

from pathlib import Path

from aeon.adapters.durable.engine import sql_engine
from aeon.adapters.durable.lease import Keeper, Leases, beat_every


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _leases(tmp_path: Path, clock: Clock) -> Leases:
    return Leases(sql_engine(f"sqlite:///{tmp_path / 'system.sqlite'}"), clock=clock)


def test_an_expired_lease_is_taken_over_once_and_a_renewed_one_never(tmp_path: Path) -> None:
    clock = Clock()
    leases = _leases(tmp_path, clock)
    recovered: list[list[str]] = []
    live = Keeper(leases, "worker-live", 60, recovered.append)
    leases.beat("worker-dead", 10)
    leases.beat("worker-paused", 10)

    clock.now += 4
    assert live.tick() == [] and recovered == []
    assert not leases.of(["worker-dead"])["worker-dead"].late(clock.now)
    clock.now += 2  # two of its four beats per grace period missed: likely dead, not yet taken over
    assert leases.of(["worker-dead"])["worker-dead"].late(clock.now)
    assert live.tick() == []

    clock.now += 4.5
    leases.beat("worker-paused", 10)  # it was only paused: renewed in time, never taken over
    assert live.tick() == ["worker-dead"]
    assert recovered == [["worker-dead"]]
    assert set(leases.of(["worker-dead", "worker-paused", "worker-live"])) == {"worker-paused", "worker-live"}
    assert live.tick() == [] and recovered == [["worker-dead"]]  # taken over once


def test_a_live_process_never_takes_itself_over(tmp_path: Path) -> None:
    clock = Clock()
    leases = _leases(tmp_path, clock)
    recovered: list[list[str]] = []
    keeper = Keeper(leases, "worker-a", 1, recovered.append)
    keeper.tick()
    clock.now += 100
    assert keeper.tick() == [] and recovered == []


def test_a_lease_is_renewed_four_times_per_grace_period_at_most_every_5_s() -> None:
    assert beat_every(1) == 0.25
    assert beat_every(60) == 5.0
