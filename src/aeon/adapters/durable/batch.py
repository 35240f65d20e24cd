"""A batch on the record: one queued run per request, ids `batch-<batch>-<line>`, and its tally read from the
system database (outcomes read once, when a run ends)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import msgspec
from dbos import DBOS, SetWorkflowID

from aeon.adapters.durable.approval import waiting_on
from aeon.adapters.durable.engine import BATCH_QUEUE, DurableEngine, open_client
from aeon.adapters.durable.lease import Lease
from aeon.adapters.durable.runtime import RunSpec, decode_outcome, held
from aeon.adapters.durable.workflow import run_workflow
from aeon.application.results import RunResult
from aeon.domain.approval import Pending

_DONE = ("SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")
_RUN_ID = re.compile(r"batch-(?P<batch>[0-9a-f]+(?:r[0-9]+)?)-(?P<line>[0-9]{5,})")

ASK_AFTER = 1.0  # seconds a run is pending before the batch asks whether it waits for a person's decision


def tag(bid: str, generation: int) -> str:
    """The batch's name in its run ids: `<id>` the first time the file runs, `<id>r<n>` the n-th (--fresh)."""
    return bid if generation <= 1 else f"{bid}r{generation}"


def run_id(batch: str, line: int) -> str:
    return f"batch-{batch}-{line:05d}"


def batch_of(run: str) -> tuple[str, int] | None:
    """The batch and line a run id names (run_id's inverse), or None for a run of no batch."""
    found = _RUN_ID.fullmatch(run)
    return (found["batch"], int(found["line"])) if found else None


def generation(client: Any, bid: str) -> int:
    """The latest generation of batch `bid` on the record (0: it never ran). A generation is on the record once its
    first run is: the runs are enqueued in line order."""
    if not client.list_workflows(workflow_ids=[run_id(bid, 1)], load_input=False, load_output=False):
        return 0
    latest, probe = 1, 2
    while True:  # 32 generations per look
        candidates = {run_id(tag(bid, g), 1): g for g in range(probe, probe + 32)}
        found = client.list_workflows(workflow_ids=list(candidates), load_input=False, load_output=False)
        if not found:
            return latest
        latest = max(candidates[w.workflow_id] for w in found)
        probe += 32


def name_for(url: str, bid: str, count: int, *, fresh: bool) -> tuple[str, int, int]:
    """The batch's name (its latest generation, or a new one when `fresh`) and how many of its `count` runs are on
    the record already: (name, ended, not ended)."""
    client = open_client(url)
    try:
        latest = generation(client, bid)
        name = tag(bid, latest + 1 if fresh else max(latest, 1))
        return name, *on_record(client, [run_id(name, i) for i in range(1, count + 1)])
    except Exception:  # no schema yet (a database never launched on): nothing on the record
        return tag(bid, 1), 0, 0
    finally:
        client.destroy()


def on_record(client: Any, ids: list[str]) -> tuple[int, int]:
    """How many of `ids` are already on the record: (ended, not ended)."""
    found = client.list_workflows(workflow_ids=ids, load_input=False, load_output=False)
    ended = sum(1 for w in found if w.status in _DONE)
    return ended, len(found) - ended


def enqueue(batch: str, requests: list[str], spec_for: Callable[[str], RunSpec]) -> list[str]:
    """One workflow per request, ids `batch-<batch>-<line>`; a run already on the record is left as it is."""
    ids = []
    for i, request in enumerate(requests, 1):
        rid = run_id(batch, i)
        spec = msgspec.structs.replace(spec_for(request), run_id=rid)
        with SetWorkflowID(rid):
            DBOS.enqueue_workflow(BATCH_QUEUE, run_workflow, held().recorded_input(spec))
        ids.append(rid)
    return ids


def enqueue_spec(spec: RunSpec) -> None:
    """One run on the queue, as `spec` says (a run already on the record under its id is left as it is)."""
    with SetWorkflowID(spec.run_id):
        DBOS.enqueue_workflow(BATCH_QUEUE, run_workflow, held().recorded_input(spec))


class Tally:
    """What the batch has done so far, from the system database: outcomes are read once, when a run ends."""

    def __init__(
        self,
        engine: DurableEngine,
        ids: list[str],
        document: Callable[[RunResult], dict[str, Any]],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._engine, self.ids, self._clock, self._document = engine, ids, clock, document
        self._pending_since: dict[str, float] = {}
        self._line_of = {run_id: i + 1 for i, run_id in enumerate(ids)}
        self.results: dict[str, dict[str, Any]] = {}
        self.running = 0
        self.tokens = 0
        self.failed = 0
        self.stuck: dict[str, Lease] = {}  # run id -> the lease of the process it is pending on, which went silent
        self.awaiting: dict[str, Pending] = {}  # run id -> the call it waits on a person's decision for

    def poll(self) -> None:
        """Ask the system database about the runs not yet ended only: a 10,000-run batch near its end asks about a
        few (listing every run each time took as much CPU as the runs themselves)."""
        waiting = [run_id for run_id in self.ids if run_id not in self.results]
        statuses = self._engine.client.list_workflows(workflow_ids=waiting, load_input=False, load_output=False)
        ended = [w.workflow_id for w in statuses if w.status in _DONE]
        pending = {w.workflow_id: w.executor_id for w in statuses if w.status == "PENDING"}
        self.stuck = self._stuck(pending)
        now = self._clock()
        self._pending_since = {r: self._pending_since.get(r, now) for r in pending}
        # whether it waits for a decision is asked of a run pending for ASK_AFTER or more (so a waiting run is seen
        # that much later): asking every running run at every poll cost a batch about 10 ms of CPU per run. A run
        # executing in this process is asked only once it said it waits (runtime.asked): it would have.
        here = self._engine.executor_id
        asked = [
            r
            for r, executor in pending.items()
            if r in self.awaiting
            or r in held().asked
            or (executor != here and now - self._pending_since[r] >= ASK_AFTER)
        ]
        self.awaiting = {r: p for r in asked if (p := waiting_on(self._engine.client, r))}
        self.running = len(pending) - len(self.awaiting)
        for w in self._engine.client.list_workflows(workflow_ids=ended, load_input=False) if ended else []:
            self.results[w.workflow_id] = self._line(w)

    def _stuck(self, pending: dict[str, str | None]) -> dict[str, Lease]:
        """The pending runs whose process has missed its heartbeats (killed, its host gone)."""
        if not pending:
            return {}
        leases = self._engine.leases
        found, now = leases.of(e for e in pending.values() if e), leases.now()
        return {
            run_id: found[e] for run_id, e in pending.items() if e is not None and e in found and found[e].late(now)
        }

    def _line(self, w: Any) -> dict[str, Any]:
        line = {"line": self._line_of[w.workflow_id], "run_id": w.workflow_id}
        if w.status != "SUCCESS":
            self.failed += 1
            return {**line, "status": "failed", "error": {"code": "AEON.DURABLE.FAILED", "message": str(w.error)}}
        outcome = decode_outcome(w.output)
        if outcome.stopped is not None:
            self.failed += 1
            return {**line, "status": "stopped", "error": msgspec.to_builtins(outcome.stopped)}
        assert outcome.result is not None
        budget = outcome.result.budget
        self.tokens += budget.prompt_tokens + budget.completion_tokens
        self.failed += outcome.result.status.value in ("error", "failed")
        return {**line, **self._document(outcome.result)}

    @property
    def done(self) -> int:
        return len(self.results)

    @property
    def settled(self) -> int:
        """Runs that need nothing more from this batch: ended, or waiting for a person (aeon approve / deny)."""
        return len(self.results) + len(self.awaiting)
