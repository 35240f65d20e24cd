"""Runs as an HTTP API shows them (`aeon serve`): one run read now (its row, its outcome once it ended, the call it
waits on), a page of runs newest first after a cursor, and where a run's log is and whether it ended."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from aeon.adapters.durable.approval import waiting_on
from aeon.adapters.durable.engine import DurableEngine
from aeon.adapters.durable.listing import RunHeads
from aeon.adapters.durable.rows import RunRow
from aeon.adapters.durable.runtime import RUN_WORKFLOW, RunSpec, Stopped
from aeon.adapters.durable.status import read_run
from aeon.application.results import RunResult
from aeon.application.views.run_resource import run_document
from aeon.domain.approval import Pending

_GOING = ("PENDING", "ENQUEUED")
_CHUNK = 50  # runs read from the record at once while a page is filled


@dataclass(frozen=True)
class Read:
    """One run read now: its row as `aeon runs` lists it, its result once it ended, the call it waits on, why it
    stopped before finishing (a non-idempotent tool call cut off by a crash)."""

    row: RunRow
    result: RunResult | None
    pending: Pending | None
    spec: RunSpec | None
    stopped: Stopped | None = None


def read(engine: DurableEngine, run_id: str) -> Read | None:
    """Run `run_id` read from the record now (None: no such run)."""
    found = engine.client.list_workflows(workflow_ids=[run_id], name=RUN_WORKFLOW)
    return _read(engine, found[0]) if found else None


def _read(engine: DurableEngine, w: object) -> Read:
    row, outcome = read_run(engine, w)
    pending = waiting_on(engine.client, row.id) if row.status == "awaiting_approval" else None
    spec = msgspec.json.decode(w.input["args"][0], type=RunSpec) if w.input else None  # type: ignore[attr-defined]
    stopped = outcome.stopped if outcome is not None else None
    return Read(row, outcome.result if outcome is not None else None, pending, spec, stopped)


def document(one: Read) -> dict[str, Any]:
    """The run's JSON document (application/views/run_resource.py)."""
    row = one.row
    error = {"code": one.stopped.code, "message": one.stopped.message} if one.stopped is not None else None
    return run_document(run_id=row.id, status=row.status, request=row.request, started=row.started,
                        result=one.result, pending=one.pending, error=error)  # fmt: skip


def ended(engine: DurableEngine, run_id: str) -> dict[str, Any] | None:
    """Run `run_id`'s document once it ended (None: it goes on, waits for a person, or was cut off)."""
    one = read(engine, run_id)
    return document(one) if one is not None and one.row.status not in _STILL else None


_STILL = ("queued", "pending", "running", "awaiting_approval", "interrupted")


def page(
    engine: DurableEngine, heads: RunHeads, *, status: str | None, after: str | None, limit: int, scan: int = 5_000
) -> tuple[list[Read], str | None]:
    """Up to `limit` runs newest first, after run `after` (None: from the newest), of `status` when given (as
    `aeon runs` says it); the cursor of the next page (None: no more). At most `scan` runs are looked at."""
    ids = [h.id for h in heads.read()]
    start = ids.index(after) + 1 if after in ids else 0
    found: list[Read] = []
    last = start
    for chunk_at, chunk in _chunks(ids, start, min(len(ids), start + scan)):
        workflows = {w.workflow_id: w for w in engine.client.list_workflows(workflow_ids=chunk, name=RUN_WORKFLOW)}
        for i, run_id in enumerate(chunk):
            last = chunk_at + i + 1
            if run_id in workflows:
                one = _read(engine, workflows[run_id])
                if status is None or one.row.status == status:
                    found.append(one)
            if len(found) == limit:
                return found, (ids[last - 1] if last < len(ids) else None)
    return found, (ids[last - 1] if last < len(ids) else None)


def _chunks(ids: list[str], start: int, end: int) -> Iterator[tuple[int, list[str]]]:
    for at in range(start, end, _CHUNK):
        yield at, ids[at : min(at + _CHUNK, end)]


def watched(engine: DurableEngine, run_id: str) -> tuple[bool, Path | None] | None:
    """Whether run `run_id` has ended, and the log its records go to (None: no such run)."""
    found = engine.client.list_workflows(workflow_ids=[run_id], name=RUN_WORKFLOW)
    if not found:
        return None
    w = found[0]
    spec = msgspec.json.decode(w.input["args"][0], type=RunSpec) if w.input else None
    log = spec.overrides.get("log.path") if spec is not None else None
    return w.status not in _GOING, Path(log) if isinstance(log, str) else None
