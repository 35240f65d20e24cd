"""What a live page (a run in progress, a batch) is sent as it is looked at again: its live part when it changed, its
status when that changed, and the end once nothing more can change (or the run is gone)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aeon.application.views.catalog import Batch
from aeon.application.views.run_page import RunView


@dataclass(frozen=True)
class Seen:
    """One look: `mark` changes when the page would, `html` is the live part, `over` once nothing can change."""

    mark: tuple[Any, ...]
    html: str
    status: str
    over: bool


def run_seen(view: RunView, html: str) -> Seen:
    """A run's page changes with its records, status, LLM calls and whether it waits; it is over once finished."""
    row = view.summary.row
    return Seen((len(view.records), row.status, row.calls, view.pending is not None), html, row.status, view.finished)


def batch_seen(batch: Batch, html: str) -> Seen:
    """A batch's page changes with its progress; it is over once none of its runs is queued or running."""
    mark = (batch.done, batch.running, batch.queued, batch.awaiting, batch.tokens)
    return Seen(mark, html, "", not (batch.running or batch.queued))


class Feed:
    """A live page's feed: what it was last sent, and the events one more look calls for."""

    def __init__(self, status: str) -> None:
        self._mark: tuple[Any, ...] | None = None
        self._status = status  # the status the page was shown with

    def events(self, seen: Seen | None) -> list[dict[str, str]]:
        """`update` with the live part, `status` with the new status, `end` with why it ended (the last event)."""
        if seen is None:
            return [{"event": "end", "data": "gone"}]
        out = []
        if seen.mark != self._mark:
            out.append({"event": "update", "data": seen.html})
            self._mark = seen.mark
        if seen.status != self._status:
            out.append({"event": "status", "data": seen.status})
            self._status = seen.status
        if seen.over:
            out.append({"event": "end", "data": seen.status})
        return out
