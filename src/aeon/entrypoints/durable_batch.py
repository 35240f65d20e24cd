"""`aeon batch`: one durable run per JSONL line on a DBOS queue, progress on stderr, one result per line."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import msgspec
from dbos import DBOS, SetWorkflowID

from aeon.adapters.documents import MAX_BATCH_BYTES, parse_json, read_text
from aeon.adapters.durable.engine import BATCH_QUEUE, DurableEngine
from aeon.application.errors import InputError
from aeon.entrypoints.durable_ops import decode_outcome
from aeon.entrypoints.durable_runner import RunSpec, run_workflow
from aeon.entrypoints.render import result_document

_DONE = ("SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")


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


def enqueue(bid: str, requests: list[str], spec_for: Callable[[str], RunSpec]) -> list[str]:
    """One workflow per request, ids `batch-<id>-<line>`; a run already on the record is left as it is."""
    ids = []
    for i, request in enumerate(requests, 1):
        run_id = f"batch-{bid}-{i:05d}"
        spec = msgspec.structs.replace(spec_for(request), run_id=run_id)
        with SetWorkflowID(run_id):
            DBOS.enqueue_workflow(BATCH_QUEUE, run_workflow, msgspec.json.encode(spec).decode())
        ids.append(run_id)
    return ids


class Tally:
    """What the batch has done so far, from the system database: outcomes are read once, when a run ends."""

    def __init__(self, engine: DurableEngine, ids: list[str]) -> None:
        self._engine, self.ids = engine, ids
        self._line_of = {run_id: i + 1 for i, run_id in enumerate(ids)}
        self.results: dict[str, dict[str, Any]] = {}
        self.running = 0
        self.tokens = 0
        self.failed = 0

    def poll(self) -> None:
        """Ask the system database about the runs not yet ended only: a 10,000-run batch near its end asks about a
        few (listing every run each time took as much CPU as the runs themselves)."""
        waiting = [run_id for run_id in self.ids if run_id not in self.results]
        statuses = self._engine.client.list_workflows(workflow_ids=waiting, load_input=False, load_output=False)
        ended = [w.workflow_id for w in statuses if w.status in _DONE]
        self.running = sum(1 for w in statuses if w.status == "PENDING")
        for w in self._engine.client.list_workflows(workflow_ids=ended, load_input=False) if ended else []:
            self.results[w.workflow_id] = self._line(w)

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
        self.failed += outcome.result.status.value == "error"
        return {**line, **result_document(outcome.result)}

    @property
    def done(self) -> int:
        return len(self.results)


def watch(tally: Tally, err: TextIO, *, every: float = 0.5, clock: Callable[[], float] = time.monotonic) -> None:
    """Poll until every run has ended, printing progress (done, running, failed, tokens, ETA) when it changes."""
    start, first, last = clock(), None, ""
    total = len(tally.ids)
    while True:
        tally.poll()
        first = tally.done if first is None else first
        elapsed, fresh = clock() - start, tally.done - first
        left = total - tally.done
        eta = f"{elapsed / fresh * left:.0f}s" if fresh and left else ("0s" if not left else "?")
        line = (
            f"batch: {tally.done}/{total} done · {tally.running} running · {tally.failed} failed · "
            f"{tally.tokens} tokens · ETA {eta}"
        )
        if line != last:
            err.write(line + "\n")
            err.flush()
            last = line
        if not left:
            return
        time.sleep(every)


def write_results(tally: Tally, out: Path) -> None:
    """One result per line, in the order of the requests; written whole or not at all."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for run_id in tally.ids:
            f.write(msgspec.json.encode(tally.results[run_id]).decode() + "\n")
    tmp.replace(out)
