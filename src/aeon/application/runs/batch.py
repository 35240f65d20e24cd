"""The batch use case (`aeon batch`): one durable run per request queued on a DurableRuns port with a queue, each as
the door records it, then followed until every run has ended or waits for a person."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from aeon.application.results import RunResult
from aeon.application.views.result import result_document


class Tallied(Protocol):
    """What a batch's runs have done so far (adapters/durable/batch.py's Tally)."""

    ids: list[str]
    failed: int
    awaiting: dict[str, Any]


T = TypeVar("T", bound=Tallied)
T_co = TypeVar("T_co", bound=Tallied, covariant=True)


class Queue(Protocol[T_co]):
    """What the batch use case asks of a DurableRuns port with a queue (DbosRuns)."""

    def enqueue(self, batch: str, requests: list[str], spec_for: Callable[[str], Any]) -> list[str]: ...

    def tally(self, ids: list[str], document: Callable[[RunResult], dict[str, Any]]) -> T_co: ...


@dataclass(frozen=True)
class Batch(Generic[T]):
    """Batches on `port`, each request's run recorded by `spec_for` (its config, overrides and log, made absolute
    so that any worker can execute it)."""

    port: Queue[T]
    spec_for: Callable[[str], Any]

    def queue(self, name: str, requests: list[str]) -> list[str]:
        """Batch `name` on the queue, one run per request, in line order; a run already on the record (the same file
        ran before) stays as it is, and its result is reused. Returns the runs' ids."""
        return self.port.enqueue(name, requests, self.spec_for)

    def follow(self, ids: list[str], watch: Callable[[T], None]) -> T:
        """What runs `ids` have done once `watch` has followed them (polling the tally) until each has ended or waits
        for a person; an ended run's result as `aeon run --json` shows it."""
        tally = self.port.tally(ids, result_document)
        watch(tally)
        return tally
