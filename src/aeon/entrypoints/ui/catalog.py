"""The runs `aeon ui` lists: one summary per recorded run, as `aeon runs` reads it, kept in memory and read again
only when the run moved on, so that filtering and paging 10,000 runs stays fast."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from aeon.adapters.durable import status as listing
from aeon.adapters.durable.batch import batch_of
from aeon.adapters.durable.engine import DurableEngine
from aeon.adapters.durable.listing import Head, RunHeads
from aeon.adapters.durable.rows import RunRow, whole_run_seconds
from aeon.adapters.durable.runtime import RUN_WORKFLOW
from aeon.application.redaction import Redactor
from aeon.application.views import catalog as view
from aeon.application.views.catalog import RunSummary

_FRESH = 2.0  # seconds a running run's summary (pass, calls, tokens so far; awaiting or not) is shown before re-reading
_CHUNK = 250  # runs read per query while indexing


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

    def summaries(self, heads: Iterable[view.Head]) -> list[RunSummary]:
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

    def _stale(self, head: view.Head, now: float) -> bool:
        known = self._known.get(head.id)
        if known is None or known.head.status != head.status or known.head.updated_at != head.updated_at:
            return True
        return head.status == "PENDING" and now - known.read_at >= _FRESH

    def _read(self, ids: list[str], heads: dict[str, view.Head]) -> dict[str, RunSummary]:
        found = self._engine.client.list_workflows(workflow_ids=ids, name=RUN_WORKFLOW)
        now = self._clock()
        return {
            w.workflow_id: summary_of(self._engine, self._redactor, w, heads.get(w.workflow_id), now) for w in found
        }

    def warm(self) -> None:
        """Read every run once (the server does it in the background as it starts)."""
        self.summaries(self.refresh(every=0))
        self.indexed.set()

    def page(self, *, status: str = "", text: str = "", number: int = 1, per: int = 50) -> view.Page:
        """Runs newest first, filtered by status and by text in the request or id, page `number` of `per`."""
        heads = self.refresh()
        counts: dict[str, int] = {}
        found: list[view.Head] = list(heads)  # before the index is built: the page's runs are read, the others later
        if status or text or self.indexed.is_set():
            summaries = self.summaries(heads)
            counts = dict(Counter(s.row.status for s in summaries))
            found = [s.head for s in view.matching(summaries, status=status, text=text)]
        number, pages = view.paging(len(found), number, per)
        shown = self.summaries(found[(number - 1) * per : number * per])
        return view.Page(rows=shown, total=len(found), number=number, pages=pages, counts=counts)

    def awaiting(self) -> list[RunSummary]:
        """The runs waiting for a person's decision, oldest first (the first asked is the first to answer)."""
        pending = [h for h in self.refresh() if h.status == "PENDING"]
        return [s for s in reversed(self.summaries(pending)) if s.row.status == "awaiting_approval"]

    def batches(self) -> list[view.Batch]:
        """Every batch on the record, the most recently started first."""
        return view.batches(self.summaries(h for h in self.refresh() if batch_of(h.id) is not None))

    def batch(self, name: str) -> view.Batch | None:
        return next((b for b in self.batches() if b.name == name), None)


def summary_of(engine: DurableEngine, redactor: Redactor, w: Any, head: view.Head | None, now: float) -> RunSummary:
    """Run `w` (a DBOS WorkflowStatus read with its input and output) as the table lists it, redacted."""
    found, outcome = listing.read_run(engine, w)
    row = redactor.struct(found, RunRow)
    cost = cap = error = None
    if outcome is not None and (result := outcome.result) is not None:
        cost = result.budget.cost
        cap = result.ttl_expiration.cap.value if result.ttl_expiration is not None else None
        error = f"{result.error.code}: {result.error.message}" if result.error is not None else None
    elif w.status not in view.LIVE and w.error is not None:
        error = str(w.error)
    if head is None or head.status != w.status:
        head = Head(w.workflow_id, w.status, getattr(w, "created_at", None) or 0, getattr(w, "updated_at", None) or 0)
    finished = head.status not in view.LIVE
    duration = whole_run_seconds(finished, head.created_at, head.updated_at, row.duration)
    batch, line = batch_of(row.id) or (None, 0)
    return RunSummary(row, cost, cap, redactor.text(error) if error else None, head, now, duration, batch, line)
