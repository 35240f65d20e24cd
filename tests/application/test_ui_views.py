"""aeon ui's views without a database: the runs index reads a run again only when it moved on (or, running, when its
summary is stale), filters and pages what it read, tallies batches; a live feed sends only what changed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aeon.application.views.catalog import Head, RunSummary
from aeon.application.views.feed import Feed, Seen
from aeon.application.views.run_index import RunIndex


@dataclass(frozen=True)
class _Head:
    id: str
    status: str
    created_at: int = 1_000
    updated_at: int = 2_000


@dataclass(frozen=True)
class _Row:
    id: str
    request: str
    status: str
    calls: int = 1
    tokens: int = 10
    started: str = "2026-01-01T00:00:00"


class _Record:
    """Heads and runs as a system database would give them, counting the runs read."""

    def __init__(self) -> None:
        self.heads: list[_Head] = []
        self.statuses: dict[str, str] = {}
        self.read: list[str] = []
        self.now = 0.0

    def add(self, run: str, head: str, status: str) -> None:
        self.heads.insert(0, _Head(run, head))
        self.statuses[run] = status

    def runs(self, ids: list[str], heads: Mapping[str, Head], now: float) -> dict[str, RunSummary]:
        self.read += ids
        found = {}
        for run in ids:
            head = heads[run]
            batch = run.split("-")[1] if run.startswith("batch-") else None
            row = _Row(run, f"request of {run}", self.statuses[run])
            found[run] = RunSummary(row, 0.5, None, None, head, now, 1.0, batch, int(run[-1]) if batch else 0)
        return found

    def index(self) -> RunIndex:
        return RunIndex(lambda: self.heads, self.runs, lambda run: run.startswith("batch-"), clock=lambda: self.now)


def test_a_finished_run_is_read_once_and_a_running_one_again_once_its_summary_is_stale() -> None:
    record = _Record()
    record.add("done", "SUCCESS", "completed")
    record.add("going", "PENDING", "running")
    index = record.index()
    index.warm()
    assert sorted(record.read) == ["done", "going"]
    record.now = 1.0
    index.page()
    assert sorted(record.read) == ["done", "going"]  # nothing moved on, nothing stale yet
    record.now = 3.0
    index.page()
    assert sorted(record.read) == ["done", "going", "going"]  # the running run's summary was 2 s old


def test_the_page_filters_by_status_and_by_text_in_the_request_or_id_and_counts_by_status() -> None:
    record = _Record()
    for i in range(5):
        record.add(f"run{i}", "SUCCESS", "completed" if i % 2 else "error")
    index = record.index()
    index.warm()
    page = index.page(status="error", text="REQUEST OF RUN", per=2, number=9)
    assert (page.total, page.pages, page.number) == (3, 2, 2)  # a page past the last shows the last
    assert [s.row.id for s in page.rows] == ["run0"]  # newest first: run4, run2 on page 1
    assert page.counts == {"error": 3, "completed": 2}


def test_a_batch_is_tallied_from_its_runs_in_line_order() -> None:
    record = _Record()
    record.add("batch-ab-1", "SUCCESS", "completed")
    record.add("batch-ab-2", "ERROR", "error")
    record.add("batch-ab-3", "ENQUEUED", "queued")
    record.add("alone", "SUCCESS", "completed")
    batch = record.index().batch("ab")
    assert batch is not None and [s.row.id for s in batch.runs] == ["batch-ab-1", "batch-ab-2", "batch-ab-3"]
    assert (batch.done, batch.failed, batch.queued, batch.tokens) == (2, 1, 1, 30)
    assert "alone" not in record.read  # a run of no batch is not read for the batches


def test_a_live_feed_sends_the_page_when_it_changed_the_status_when_it_changed_and_then_the_end() -> None:
    feed = Feed("running")
    assert [e["event"] for e in feed.events(Seen((1,), "<p>1</p>", "running", False))] == ["update"]
    assert feed.events(Seen((1,), "<p>1</p>", "running", False)) == []
    ended = feed.events(Seen((2,), "<p>2</p>", "completed", True))
    assert ended == [
        {"event": "update", "data": "<p>2</p>"},
        {"event": "status", "data": "completed"},
        {"event": "end", "data": "completed"},
    ]
    assert Feed("running").events(None) == [{"event": "end", "data": "gone"}]
