"""`aeon batch`: one durable run per JSONL line on a DBOS queue, progress on stderr, one result per line."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import msgspec
from dbos import DBOS, SetWorkflowID

from aeon.adapters.documents import MAX_BATCH_BYTES, parse_json, read_text
from aeon.adapters.durable.approval import waiting_on
from aeon.adapters.durable.engine import BATCH_QUEUE, DurableEngine, open_client
from aeon.adapters.durable.lease import Lease
from aeon.application.errors import InputError
from aeon.domain.approval import Pending
from aeon.domain.log_run import BatchStartRecord
from aeon.entrypoints.container import Container, opened
from aeon.entrypoints.durable.ops import decode_outcome
from aeon.entrypoints.durable.runner import Live, RunSpec, recorded_input, run_workflow
from aeon.entrypoints.render import result_document
from aeon.entrypoints.session import ready

_DONE = ("SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")
_RUN_ID = re.compile(r"batch-(?P<batch>[0-9a-f]+(?:r[0-9]+)?)-(?P<line>[0-9]{5,})")
ASK_AFTER = 1.0  # seconds a run is pending before the batch asks whether it waits for a person's decision


async def checked(container: Container, name: str, runs: int) -> None:
    """Before any run of batch `name` is queued: the checks every front door makes (session.ready: the model can
    run, the log can be opened), and the log's first record — `batch_start`, naming the batch and its number of runs
    — written, so that a log that takes no record (a full device) stops the batch before anything is spent. A
    queued run cannot prove it: it holds its records until its first step, an LLM call, is on the record."""
    async with opened(container, container.event_log, container.llm):
        await ready(container)
        log = container.event_log()
        log.bind(name)
        log.emit(BatchStartRecord(batch=name, runs=runs))


def read_requests(path: Path) -> list[str]:
    """The requests of a JSONL file: each line `{"request": "..."}` or a JSON string; blank lines are skipped.
    Raises InputError naming the file and line of the first bad one."""
    lines = read_text(path, what="batch file", max_bytes=MAX_BATCH_BYTES).splitlines()
    requests = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        item = parse_json(line, source=str(path), first_line=number)
        request = item.get("request") if isinstance(item, dict) else item
        if not isinstance(request, str) or not request.strip():
            raise InputError(f'{path}:{number}: expected {{"request": "..."}} with a non-empty request')
        requests.append(request)
    if not requests:
        raise InputError(f"{path} holds no requests")
    return requests


def batch_id(path: Path, requests: list[str]) -> str:
    """The same file (path and content) is the same batch: started again, it goes on where it stopped."""
    digest = hashlib.sha256(str(path.resolve()).encode() + b"\0" + "\n".join(requests).encode())
    return digest.hexdigest()[:12]


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
            DBOS.enqueue_workflow(BATCH_QUEUE, run_workflow, recorded_input(spec))
        ids.append(rid)
    return ids


class Tally:
    """What the batch has done so far, from the system database: outcomes are read once, when a run ends."""

    def __init__(self, engine: DurableEngine, ids: list[str], *, clock: Callable[[], float] = time.monotonic) -> None:
        self._engine, self.ids, self._clock = engine, ids, clock
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
        # executing in this process is asked only once it said it waits (Live.asked): it would have.
        here = self._engine.executor_id
        asked = [
            r
            for r, executor in pending.items()
            if r in self.awaiting or r in Live.asked or (executor != here and now - self._pending_since[r] >= ASK_AFTER)
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
        return {**line, **result_document(outcome.result)}

    @property
    def done(self) -> int:
        return len(self.results)

    @property
    def settled(self) -> int:
        """Runs that need nothing more from this batch: ended, or waiting for a person (aeon approve / deny)."""
        return len(self.results) + len(self.awaiting)


def watch(tally: Tally, err: TextIO, *, every: float = 0.5, clock: Callable[[], float] = time.monotonic) -> None:
    """Poll until every run has ended, printing progress (done, running, failed, tokens, ETA) when it changes."""
    start, first, last = clock(), None, ""
    total = len(tally.ids)
    while True:
        tally.poll()
        first = tally.done if first is None else first
        elapsed, fresh = clock() - start, tally.done - first
        left = total - tally.settled
        eta = f"{elapsed / fresh * left:.0f}s" if fresh and left else ("0s" if not left else "?")
        line = (
            f"batch: {tally.done}/{total} done · {tally.running} running · {tally.failed} failed · "
            f"{tally.tokens} tokens · ETA {eta}"
        )
        if tally.awaiting:
            line += f" · {len(tally.awaiting)} awaiting approval (aeon approve RUN_ID / aeon deny RUN_ID --reason TEXT)"
        stuck = sorted(tally.stuck.items())
        line += "".join(f"\n{stuck_line(run_id, lease)}" for run_id, lease in stuck[:3])
        if len(stuck) > 3:
            line += f"\nbatch: {len(stuck) - 3} more runs are stuck the same way (aeon runs lists them as pending)"
        if line != last:
            err.write(line + "\n")
            err.flush()
            last = line
        if not left:
            return
        time.sleep(every)


def stuck_line(run_id: str, lease: Lease) -> str:
    """What to say of a run whose process went silent: who, since when, and the two ways it gets finished."""
    since, takeover = (datetime.fromtimestamp(t).strftime("%H:%M:%S") for t in (lease.beat_at, lease.expires_at))
    return (
        f"batch: run {run_id} is stuck: {lease.executor_id} has not been heard from since {since}; a live worker "
        f"takes it over at {takeover} (durable.recover_after_seconds), or finish it now: aeon resume {run_id}"
    )


def write_results(tally: Tally, out: Path) -> None:
    """One result per line, in the order of the requests; written whole or not at all."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for i, run_id in enumerate(tally.ids):
            line = tally.results.get(run_id) or awaiting_line(i + 1, run_id, tally.awaiting[run_id])
            f.write(msgspec.json.encode(line).decode() + "\n")
    tmp.replace(out)


def awaiting_line(line: int, run_id: str, pending: Pending) -> dict[str, Any]:
    """A batch result for a run that waits for a person's decision: the call it waits on."""
    request = msgspec.to_builtins(pending.request)
    return {"line": line, "run_id": run_id, "status": "awaiting_approval", "pending_approval": request}
