"""What a batch says while its runs execute (progress on stderr, the runs stuck on a silent process) and the results
file it writes, one line per request, when each run has ended or waits for a person."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import msgspec

from aeon.adapters.durable.batch import Tally
from aeon.adapters.durable.lease import Lease
from aeon.domain.approval import Pending


def batch_id(path: Path, requests: list[str]) -> str:
    """The same file (path and content) is the same batch: started again, it goes on where it stopped."""
    digest = hashlib.sha256(str(path.resolve()).encode() + b"\0" + "\n".join(requests).encode())
    return digest.hexdigest()[:12]


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


def queued_lines(name: str, count: int, queue: str, reused: int, going_on: int, file: Path) -> list[str]:
    """What a batch says once its runs are on the queue: how many, and how many a start before already finished (their
    results reused) or began (they go on where they stopped)."""
    lines = [f"batch {name}: {count} runs on queue {queue}"]
    if reused:
        lines.append(
            f"batch {name}: {reused} of {count} runs already finished when this file ran before: their "
            f"results are reused, not run again (to run the file again: aeon batch {file} --fresh)"
        )
    if going_on:
        lines.append(f"batch {name}: {going_on} runs started before go on where they stopped")
    return lines


def stays(name: str, *, fresh: bool) -> str:
    """What a batch stopped by Ctrl-C or SIGTERM leaves: itself on the record, and how to go on."""
    again = "again without --fresh" if fresh else "the same command again"
    return f"batch {name} is on the record; start {again} to go on"
