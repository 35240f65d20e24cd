"""The runs `aeon ui` lists, read from the system database: each run's summary as `aeon runs` reads it, and the
index (aeon.application.views.run_index) over them."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from aeon.adapters.durable import status as listing
from aeon.adapters.durable.batch import batch_of
from aeon.adapters.durable.engine import DurableEngine
from aeon.adapters.durable.listing import Head, RunHeads
from aeon.adapters.durable.rows import RunRow, whole_run_seconds
from aeon.adapters.durable.runtime import RUN_WORKFLOW
from aeon.application.redaction import Redactor
from aeon.application.views import catalog as view
from aeon.application.views import run_index as index
from aeon.application.views.catalog import RunSummary


class RunIndex(index.RunIndex):
    """The index over the runs on the system database: every run's head in one query (`heads`), a run read with its
    input and output, redacted, when it moved on."""

    def __init__(
        self, engine: DurableEngine, heads: RunHeads, redactor: Redactor, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        def read(ids: list[str], known: Mapping[str, view.Head], now: float) -> dict[str, view.RunSummary]:
            found = engine.client.list_workflows(workflow_ids=ids, name=RUN_WORKFLOW)
            return {w.workflow_id: summary_of(engine, redactor, w, known.get(w.workflow_id), now) for w in found}

        super().__init__(heads.read, read, lambda run: batch_of(run) is not None, clock=clock)


def summary_of(engine: DurableEngine, redactor: Redactor, w: Any, head: view.Head | None, now: float) -> RunSummary:
    """Run `w` (a DBOS WorkflowStatus read with its input and output) as the table lists it, redacted."""
    found, outcome = listing.read_run(engine, w)
    row = redactor.struct(found, RunRow)
    result = outcome.result if outcome is not None else None
    cost, cap, error = view.ending(result)
    if result is None and w.status not in view.LIVE and w.error is not None:
        error = str(w.error)
    if head is None or head.status != w.status:
        head = Head(w.workflow_id, w.status, getattr(w, "created_at", None) or 0, getattr(w, "updated_at", None) or 0)
    finished = head.status not in view.LIVE
    duration = whole_run_seconds(finished, head.created_at, head.updated_at, row.duration)
    batch, line = batch_of(row.id) or (None, 0)
    return RunSummary(row, cost, cap, redactor.text(error) if error else None, head, now, duration, batch, line)
