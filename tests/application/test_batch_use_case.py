"""The batch use case (`aeon batch`): each request's run recorded as the door says, and the tally handed back only
once the watch has followed every run to its end (or to a person's decision)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aeon.application.results import RunResult
from aeon.application.runs.batch import Batch
from aeon.application.views.result import result_document


@dataclass
class _Tally:
    ids: list[str]
    document: Callable[[RunResult], dict[str, Any]]
    failed: int = 0
    awaiting: dict[str, Any] = field(default_factory=dict)
    polls: int = 0


class _Queue:
    def __init__(self) -> None:
        self.queued: list[tuple[str, list[Any]]] = []

    def enqueue(self, batch: str, requests: list[str], spec_for: Callable[[str], Any]) -> list[str]:
        self.queued.append((batch, [spec_for(r) for r in requests]))
        return [f"batch-{batch}-{i:05d}" for i in range(1, len(requests) + 1)]

    def tally(self, ids: list[str], document: Callable[[RunResult], dict[str, Any]]) -> _Tally:
        return _Tally(ids, document)


def test_each_request_is_queued_as_the_door_records_it_in_line_order() -> None:
    port = _Queue()
    ids = Batch(port, lambda request: {"request": request, "config": "/abs/config.yaml"}).queue("b1", ["one", "two"])
    assert ids == ["batch-b1-00001", "batch-b1-00002"]
    assert port.queued == [
        ("b1", [{"request": "one", "config": "/abs/config.yaml"}, {"request": "two", "config": "/abs/config.yaml"}])
    ]


def test_the_tally_comes_back_once_the_watch_has_followed_the_runs_with_results_as_aeon_run_shows_them() -> None:
    def watch(tally: _Tally) -> None:
        tally.polls += 1

    tally = Batch(_Queue(), str).follow(["batch-b1-00001"], watch)
    assert tally.polls == 1 and tally.ids == ["batch-b1-00001"]
    assert tally.document is result_document
