"""The runs `aeon ui` lists, as views: a run's summary, the runs a filter and a page pick, a batch's progress. The
door reads the runs (the system database, the clock); these only arrange what it read."""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from aeon.application.results import RunResult

STATUSES = (
    "awaiting_approval", "running", "pending", "queued", "completed", "ttl_expired", "error", "interrupted",
    "unverified", "approval_expired", "denied", "stopped", "cancelled", "failed",
)  # fmt: skip
FAILED = ("error", "failed", "stopped", "cancelled", "max_recovery_attempts_exceeded")
LIVE = ("PENDING", "ENQUEUED")  # a durable run's head status while it may still move on


class Row(Protocol):
    """A run as `aeon runs` lists it (what a summary reads of it)."""

    @property
    def id(self) -> str: ...
    @property
    def request(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def calls(self) -> int: ...
    @property
    def tokens(self) -> int: ...
    @property
    def started(self) -> str: ...


class Head(Protocol):
    """What changes when a run moves on: its status and its update time (epoch milliseconds)."""

    @property
    def id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def created_at(self) -> int: ...
    @property
    def updated_at(self) -> int: ...


@dataclass(frozen=True)
class RunSummary:
    """A run as the table lists it: `aeon runs`' row (redacted), its cost, the cap that stopped it or its error; the
    batch and line it runs for (none: "" and 0); `duration`, seconds from its start (a batch's run: from when it was
    queued) to its end, every execution and every wait for a decision included."""

    row: Row
    cost: float | None
    cap: str | None
    error: str | None
    head: Head
    read_at: float
    duration: float | None
    batch: str | None
    line: int

    @property
    def finished(self) -> bool:
        return self.head.status not in LIVE


@dataclass(frozen=True)
class Page:
    rows: list[RunSummary]
    total: int  # runs matching the filter
    number: int
    pages: int
    counts: dict[str, int]  # runs by status (empty until every run is indexed)


@dataclass(frozen=True)
class Batch:
    name: str
    runs: list[RunSummary]
    done: int
    failed: int
    running: int
    queued: int
    awaiting: int
    tokens: int
    cost: float | None
    started: str
    eta: float | None  # seconds; None when not known yet (nothing done since it started)


def ending(result: RunResult | None) -> tuple[float | None, str | None, str | None]:
    """What the table shows of a run's result: its cost, the cap that stopped it, its error (code and message)."""
    if result is None:
        return None, None, None
    cap = result.ttl_expiration.cap.value if result.ttl_expiration is not None else None
    error = f"{result.error.code}: {result.error.message}" if result.error is not None else None
    return result.budget.cost, cap, error


def query(status: str, text: str, page: str | None) -> tuple[str, str, int]:
    """The runs a page asks for: a known status (else any), at most 200 characters of text, a page number (else 1)."""
    number = int(page) if page and page.isdigit() and len(page) < 7 else 1
    return (status if status in STATUSES else ""), text[:200], number


def matching(summaries: Iterable[RunSummary], *, status: str, text: str) -> list[RunSummary]:
    """The runs of `status` (any: "") whose request or id holds `text` (any case; any: "")."""
    needle = text.casefold().strip()
    return [
        s for s in summaries
        if (not status or s.row.status == status)
        and (not needle or needle in s.row.request.casefold() or needle in s.row.id.casefold())
    ]  # fmt: skip


def paging(total: int, number: int, per: int) -> tuple[int, int]:
    """The page shown (`number`, kept between the first and the last) and how many pages `total` runs make."""
    pages = max(1, math.ceil(total / per))
    return min(max(1, number), pages), pages


def batches(summaries: Iterable[RunSummary], now: Callable[[], float] = time.time) -> list[Batch]:
    """The batches the runs of a batch among `summaries` make, in the order their runs came."""
    groups: dict[str, list[RunSummary]] = {}
    for s in summaries:
        if s.batch is not None:
            groups.setdefault(s.batch, []).append(s)
    return [tally(name, runs, now) for name, runs in groups.items()]


def tally(name: str, runs: list[RunSummary], now: Callable[[], float] = time.time) -> Batch:
    """A batch's progress as `aeon batch` shows it: done (ended, failed ones too), running, failed, tokens, ETA."""
    runs = sorted(runs, key=lambda s: (s.batch or "", s.line))
    statuses = Counter(s.row.status for s in runs)
    cut_off = sum(1 for s in runs if s.row.status == "interrupted" and s.head.status in LIVE)  # resumable
    going = statuses["running"] + statuses["pending"]
    live = going + cut_off + statuses["queued"] + statuses["awaiting_approval"]
    done = len(runs) - live
    costs = [s.cost for s in runs if s.head.status not in LIVE]
    cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
    first = min((s.head.created_at for s in runs), default=0) / 1000
    left = going + cut_off + statuses["queued"]
    elapsed = max(0.0, now() - first)
    eta = 0.0 if not left else (elapsed / done * left if done else None)
    return Batch(
        name=name,
        runs=runs,
        done=done,
        failed=sum(statuses[s] for s in FAILED),
        running=going,
        queued=statuses["queued"],
        awaiting=statuses["awaiting_approval"],
        tokens=sum(s.row.tokens for s in runs),
        cost=cost,
        started=min((s.row.started for s in runs if s.row.started), default=""),
        eta=eta,
    )
