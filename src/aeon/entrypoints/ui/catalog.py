"""The runs `aeon ui` lists: one summary per recorded run, as `aeon runs` reads it, kept in memory and read again
only when the run moved on, so that filtering and paging 10,000 runs stays fast."""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from aeon.adapters.durable import status as listing
from aeon.adapters.durable.batch import batch_of
from aeon.adapters.durable.engine import DurableEngine
from aeon.adapters.durable.listing import Head, RunHeads
from aeon.adapters.durable.rows import RunRow, whole_run_seconds
from aeon.adapters.durable.runtime import RUN_WORKFLOW
from aeon.application.redaction import Redactor

STATUSES = (
    "awaiting_approval", "running", "pending", "queued", "completed", "ttl_expired", "error", "interrupted",
    "unverified", "approval_expired", "denied", "stopped", "cancelled", "failed",
)  # fmt: skip
FAILED = ("error", "failed", "stopped", "cancelled", "max_recovery_attempts_exceeded")
_LIVE = ("PENDING", "ENQUEUED")
_FRESH = 2.0  # seconds a running run's summary (pass, calls, tokens so far; awaiting or not) is shown before re-reading
_CHUNK = 250  # runs read per query while indexing


@dataclass(frozen=True)
class RunSummary:
    """A run as the table lists it: `aeon runs`' row (redacted), its cost, the cap that stopped it or its error."""

    row: RunRow
    cost: float | None
    cap: str | None
    error: str | None
    head: Head
    read_at: float

    @property
    def finished(self) -> bool:
        return self.head.status not in _LIVE

    @property
    def duration(self) -> float | None:
        """Seconds from the run's start (a batch's run: from when it was queued) to its end, every execution and
        every wait for a decision included; the last execution's own time while the system database has no times."""
        return whole_run_seconds(self.finished, self.head.created_at, self.head.updated_at, self.row.duration)

    @property
    def batch(self) -> str | None:
        found = batch_of(self.row.id)
        return found[0] if found else None


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


class RunIndex:
    """Summaries of every run on the system database. `refresh` reads every run's head (one query); a run is read
    (with its input and output) only when it is new, changed status, or is running and its summary is older than
    _FRESH seconds. Safe to call from several threads."""

    def __init__(
        self,
        engine: DurableEngine,
        heads: RunHeads,
        redactor: Redactor,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._engine, self._heads, self._redactor, self._clock = engine, heads, redactor, clock
        self._lock = threading.RLock()
        self._known: dict[str, RunSummary] = {}
        self._order: list[Head] = []
        self._read_at: float | None = None
        self.indexed = threading.Event()  # every run has been read once

    def refresh(self, *, every: float = 1.0) -> list[Head]:
        """The heads of every run, newest first (read again when the last read is `every` seconds old)."""
        with self._lock:
            now = self._clock()
            if self._read_at is None or now - self._read_at >= every:
                self._order, self._read_at = self._heads.read(), now
            return self._order

    def summaries(self, heads: Iterable[Head]) -> list[RunSummary]:
        """The summaries of `heads`, in their order, reading the runs that moved on since they were last read. The
        reads happen outside the lock, a chunk at a time: a page asked for while the index is built waits for no
        more than its own runs."""
        heads = list(heads)
        by_id = {h.id: h for h in heads}
        with self._lock:
            now = self._clock()
            stale = [h.id for h in heads if self._stale(h, now)]
        for start in range(0, len(stale), _CHUNK):
            read = self._read(stale[start : start + _CHUNK], by_id)
            with self._lock:
                self._known.update(read)
        with self._lock:
            return [self._known[h.id] for h in heads if h.id in self._known]

    def _stale(self, head: Head, now: float) -> bool:
        known = self._known.get(head.id)
        if known is None or known.head.status != head.status or known.head.updated_at != head.updated_at:
            return True
        return head.status == "PENDING" and now - known.read_at >= _FRESH

    def _read(self, ids: list[str], heads: dict[str, Head]) -> dict[str, RunSummary]:
        found = self._engine.client.list_workflows(workflow_ids=ids, name=RUN_WORKFLOW)
        now = self._clock()
        return {
            w.workflow_id: summary_of(self._engine, self._redactor, w, heads.get(w.workflow_id), now) for w in found
        }

    def warm(self) -> None:
        """Read every run once (the server does it in the background as it starts)."""
        self.summaries(self.refresh(every=0))
        self.indexed.set()

    def page(self, *, status: str = "", text: str = "", number: int = 1, per: int = 50) -> Page:
        """Runs newest first, filtered by status and by text in the request or id, page `number` of `per`."""
        heads = self.refresh()
        everything = not status and not text
        counts: dict[str, int] = {}
        if everything and not self.indexed.is_set():
            matching = heads  # the page's runs are read; the others when the index is built
        else:
            summaries = self.summaries(heads)
            counts = dict(Counter(s.row.status for s in summaries))
            needle = text.casefold().strip()
            matching_runs = [
                s for s in summaries
                if (not status or s.row.status == status)
                and (not needle or needle in s.row.request.casefold() or needle in s.row.id.casefold())
            ]  # fmt: skip
            matching = [s.head for s in matching_runs]
        pages = max(1, math.ceil(len(matching) / per))
        number = min(max(1, number), pages)
        shown = self.summaries(matching[(number - 1) * per : number * per])
        return Page(rows=shown, total=len(matching), number=number, pages=pages, counts=counts)

    def awaiting(self) -> list[RunSummary]:
        """The runs waiting for a person's decision, oldest first (the first asked is the first to answer)."""
        pending = [h for h in self.refresh() if h.status == "PENDING"]
        return [s for s in reversed(self.summaries(pending)) if s.row.status == "awaiting_approval"]

    def batches(self) -> list[Batch]:
        """Every batch on the record, the most recently started first."""
        groups: dict[str, list[RunSummary]] = {}
        batched = [h for h in self.refresh() if batch_of(h.id) is not None]
        for s in self.summaries(batched):
            groups.setdefault(s.batch or "", []).append(s)
        return [tally(name, runs) for name, runs in groups.items()]

    def batch(self, name: str) -> Batch | None:
        return next((b for b in self.batches() if b.name == name), None)


def summary_of(engine: DurableEngine, redactor: Redactor, w: Any, head: Head | None, now: float) -> RunSummary:
    """Run `w` (a DBOS WorkflowStatus read with its input and output) as the table lists it, redacted."""
    found, outcome = listing.read_run(engine, w)
    row = redactor.struct(found, RunRow)
    cost = cap = error = None
    if outcome is not None and (result := outcome.result) is not None:
        cost = result.budget.cost
        cap = result.ttl_expiration.cap.value if result.ttl_expiration is not None else None
        error = f"{result.error.code}: {result.error.message}" if result.error is not None else None
    elif w.status not in _LIVE and w.error is not None:
        error = str(w.error)
    if head is None or head.status != w.status:
        head = Head(w.workflow_id, w.status, getattr(w, "created_at", None) or 0, getattr(w, "updated_at", None) or 0)
    return RunSummary(row, cost, cap, redactor.text(error) if error else None, head, now)


def tally(name: str, runs: list[RunSummary], now: Callable[[], float] = time.time) -> Batch:
    """A batch's progress as `aeon batch` shows it: done (ended, failed ones too), running, failed, tokens, ETA."""
    runs = sorted(runs, key=lambda s: batch_of(s.row.id) or ("", 0))
    statuses = Counter(s.row.status for s in runs)
    cut_off = sum(1 for s in runs if s.row.status == "interrupted" and s.head.status in _LIVE)  # resumable
    going = statuses["running"] + statuses["pending"]
    live = going + cut_off + statuses["queued"] + statuses["awaiting_approval"]
    done = len(runs) - live
    costs = [s.cost for s in runs if s.head.status not in _LIVE]
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
