"""The index of the runs `aeon ui` lists: one summary per recorded run kept in memory and read again only when the
run moved on, so that filtering and paging 10,000 runs stays fast. The door reads the heads and the runs; the index
decides what to read again and arranges the summaries (aeon.application.views.catalog)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from aeon.application.views.catalog import Batch, Head, Page, RunSummary, batches, matching, paging

_FRESH = 2.0  # seconds a running run's summary (pass, calls, tokens so far; awaiting or not) is shown before re-reading
_CHUNK = 250  # runs read per query while indexing

# reads runs `ids` (with the heads known of them) as summaries, at the time given
Reader = Callable[[list[str], Mapping[str, Head], float], dict[str, RunSummary]]


class RunIndex:
    """Summaries of every run on the record. `refresh` reads every run's head (`heads`: one query); a run is read
    (`read`: with its input and output) only when it is new, changed status, or is running and its summary is older
    than _FRESH seconds. Safe to call from several threads."""

    def __init__(
        self,
        heads: Callable[[], Sequence[Head]],
        read: Reader,
        in_batch: Callable[[str], bool],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._heads, self._reader, self._in_batch, self._clock = heads, read, in_batch, clock
        self._lock = threading.RLock()
        self._known: dict[str, RunSummary] = {}
        self._order: Sequence[Head] = []
        self._read_at: float | None = None
        self.indexed = threading.Event()  # every run has been read once

    def refresh(self, *, every: float = 1.0) -> Sequence[Head]:
        """The heads of every run, newest first (read again when the last read is `every` seconds old)."""
        with self._lock:
            now = self._clock()
            if self._read_at is None or now - self._read_at >= every:
                self._order, self._read_at = self._heads(), now
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
        return self._reader(ids, heads, self._clock())

    def warm(self) -> None:
        """Read every run once (the server does it in the background as it starts)."""
        self.summaries(self.refresh(every=0))
        self.indexed.set()

    def page(self, *, status: str = "", text: str = "", number: int = 1, per: int = 50) -> Page:
        """Runs newest first, filtered by status and by text in the request or id, page `number` of `per`."""
        heads = self.refresh()
        counts: dict[str, int] = {}
        found: list[Head] = list(heads)  # before the index is built: the page's runs are read, the others later
        if status or text or self.indexed.is_set():
            summaries = self.summaries(heads)
            counts = dict(Counter(s.row.status for s in summaries))
            found = [s.head for s in matching(summaries, status=status, text=text)]
        number, pages = paging(len(found), number, per)
        shown = self.summaries(found[(number - 1) * per : number * per])
        return Page(rows=shown, total=len(found), number=number, pages=pages, counts=counts)

    def awaiting(self) -> list[RunSummary]:
        """The runs waiting for a person's decision, oldest first (the first asked is the first to answer)."""
        pending = [h for h in self.refresh() if h.status == "PENDING"]
        return [s for s in reversed(self.summaries(pending)) if s.row.status == "awaiting_approval"]

    def batches(self) -> list[Batch]:
        """Every batch on the record, the most recently started first."""
        return batches(self.summaries(h for h in self.refresh() if self._in_batch(h.id)))

    def batch(self, name: str) -> Batch | None:
        return next((b for b in self.batches() if b.name == name), None)
