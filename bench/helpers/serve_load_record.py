"""What the load bench reads back (bench/serve_load.py): the runs' start and end records in the audit log as it
grows, DBOS's workflow table (when about half the runs ended, which were recovered), and the exactly-once checks."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from helpers.serve_load_tools import TALLY

TERMINAL = ("completed", "failed", "stopped", "cancelled", "expired")


@dataclass
class Ends:
    """The `run_start` and `run_end` records of an audit log, read as it grows: run id -> their timestamps (epoch
    seconds)."""

    path: Path
    seen: dict[str, list[float]] = field(default_factory=dict)
    starts: dict[str, list[float]] = field(default_factory=dict)
    _offset: int = 0

    def read(self) -> int:
        if self.path.exists():
            with self.path.open("rb") as f:
                f.seek(self._offset)
                chunk = f.read()
            complete = chunk[: chunk.rfind(b"\n") + 1]
            self._offset += len(complete)
            for line in complete.splitlines():
                if b'"event":"run_end"' in line or b'"event":"run_start"' in line:
                    record = json.loads(line)
                    when = datetime.fromisoformat(record["timestamp"]).timestamp()
                    kept = self.starts if record["event"] == "run_start" else self.seen
                    kept.setdefault(record["correlation_id"], []).append(when)
        return len(self.seen)

    def wait_all(self, url: str, run_ids: list[str], timeout: float) -> dict[str, str]:
        """Until every run ended: its run_end record, or (a run that ends without one: stopped on recovery because
        the kill cut it off inside `tally`) a final status on GET /runs/{id}, asked once the log has been quiet
        for a second; returns those runs' statuses."""
        deadline, quiet, silent = time.monotonic() + timeout, time.monotonic(), dict[str, str]()
        with httpx.Client(base_url=url, timeout=60) as http:
            while missing := [r for r in run_ids if r not in self.seen and r not in silent]:
                if time.monotonic() > deadline:
                    raise SystemExit(f"timed out: {len(missing)} of {len(run_ids)} runs did not end, e.g. {missing[0]}")
                before = len(self.seen)
                time.sleep(0.05)
                if self.read() > before:
                    quiet = time.monotonic()
                elif time.monotonic() - quiet > 1 and len(missing) <= 50:
                    for run_id in missing:
                        status = http.get(f"/runs/{run_id}").json()["status"]
                        if status in TERMINAL:
                            silent[run_id] = status
                    self.read()  # a run writes its run_end before it ends: one that just ended is in the log now
                    silent = {r: status for r, status in silent.items() if r not in self.seen}
                    quiet = time.monotonic()
        return silent


def check_exactly_once(
    folder: Path, ends: Ends, docs: dict[str, dict[str, Any]], silent: dict[str, str]
) -> dict[str, int]:
    """Every run has a final status on GET /runs/{id} and started and ended once in the log, but those the kill cut
    off inside `tally`: not run again (it is not idempotent), they end `stopped` on recovery, with no run_end record
    (`silent`). `tally` ran exactly once for every completed run (its token is the run's answer), never twice, and at
    most once for a run cut off in it. Returns the final statuses counted (and
    the lines of runs cut off in `tally`); fails (SystemExit) naming what broke."""
    problems = []
    once = [r for r in docs if len(ends.seen.get(r, [])) == 1 and len(ends.starts.get(r, [])) == 1]
    twice = sorted(set(docs) - set(once) - set(silent))
    if twice:
        problems.append(f"{len(twice)} runs did not start and end exactly once in the log, e.g. {twice[0]}")
    if set(ends.seen) - set(docs):
        problems.append(f"{len(set(ends.seen) - set(docs))} runs ended that nobody POSTed")
    if any(status != "stopped" or len(ends.starts.get(r, [])) > 1 for r, status in silent.items()):
        problems.append(f"runs ended without a run_end record: {silent}")
    statuses: dict[str, int] = {}
    for run_id, doc in docs.items():
        status = "stopped: cut off in tally" if run_id in silent else doc["status"]
        statuses[status] = statuses.get(status, 0) + 1
    if set(statuses) - {*TERMINAL, "stopped: cut off in tally"}:
        problems.append(f"runs not ended on GET /runs/{{id}}: {statuses}")
    tally = folder / TALLY
    lines = tally.read_text().split()[::2] if tally.exists() else []
    tokens = {str(d["result"]["answer"]) for d in docs.values() if d["status"] == "completed"}
    if len(lines) != len(set(lines)) or not tokens <= set(lines) or len(set(lines) - tokens) > len(silent):
        problems.append(f"tally ran {len(lines)} times ({len(set(lines))} tokens) for {len(tokens)} completed runs "
                        f"and {len(silent)} cut off in it")  # fmt: skip
    if problems:
        raise SystemExit("exactly-once broken: " + "; ".join(problems))
    statuses["tally lines of runs cut off in it"] = len(set(lines) - tokens)
    return statuses


def wait_for_half(database_url: str, n: int, timeout: float) -> tuple[int, dict[str, int]]:
    """Until about half the n runs ended (the first moment past 40 % when a server has runs under way, so that the
    kill cuts some off), or every run ended: (runs ended, runs under way by executor id). Read from DBOS's workflow
    table, as the log of a process killed may lag behind it (the bench's only look inside the system database)."""
    import psycopg

    query = "SELECT status, executor_id, count(*) FROM dbos.workflow_status GROUP BY 1, 2"
    deadline = time.monotonic() + timeout
    with psycopg.connect(database_url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            rows = conn.execute(query).fetchall()
            ended = sum(count for status, _, count in rows if status not in ("PENDING", "ENQUEUED"))
            under_way = {executor: count for status, executor, count in rows if status == "PENDING"}
            if (ended >= 0.4 * n and under_way) or ended >= n:
                return ended, under_way
            time.sleep(0.01)
    raise SystemExit("timed out waiting for half the runs to end")


def runs_recovered(database_url: str) -> int:
    """How many runs were started more than once: taken over from the killed server (or back by it, restarted)."""
    import psycopg

    with psycopg.connect(database_url) as conn:
        found = conn.execute("SELECT count(*) FROM dbos.workflow_status WHERE recovery_attempts > 1").fetchone()
        return int(found[0]) if found else 0
