"""`aeon ui` over 10,000 runs: how long its pages take to answer (runs table, a later page, filters, a run, batches).

A folder gets a few real scripted runs (converged, two-pass, TTL-expired, stopped by the cost cap, a batch of 3),
then their records on the SQLite system database are copied, as they are, into --runs runs in all (new ids, start
times a second apart): making 10,000 real runs takes tens of minutes here, and the pages read records, not how
they were made. `aeon ui` is started on it and each page is fetched over HTTP: the first runs page right after start
(the index of every run is built in the background meanwhile), the first filtered page (it waits for that index),
then the median of 5 fetches of each page. Run: `.venv/bin/python bench/ui_runs.py [--runs 10000]`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
AEON = [sys.executable, "-c", "from aeon.entrypoints.cli import main; main()"]
REQUEST = "calculate the sum of 5 and 10"
RUNS = [
    ("run", REQUEST, "--config", "config/scripted-demo.yaml"),
    ("run", REQUEST, "--config", "config/scripted-two-pass.yaml"),
    ("run", REQUEST, "--config", "config/scripted-never-converges.yaml", "--ttl", "1"),
    ("run", REQUEST, "--config", "config/scripted-priced.yaml", "--max-cost", "0.007"),
    ("batch", "config/batch-sums.jsonl", "--config", "config/scripted-demo.yaml", "--out", "results.jsonl"),
]


def aeon(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AEON_")}
    argv = [a if not a.startswith("config/") else str(ROOT / a) for a in args]
    return subprocess.run([*AEON, *argv, "-q"] if args[0] == "run" else [*AEON, *argv], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def copy_runs(database: Path, log: Path, total: int) -> int:
    """Copy the recorded runs, and their records in the JSONL log, until there are `total`; returns how many real
    ones there were."""
    db = sqlite3.connect(database)
    columns = [r[1] for r in db.execute("pragma table_info(workflow_status)")]
    real = [r[0] for r in db.execute("select workflow_uuid from workflow_status where name = 'aeon.run'")]
    start = db.execute("select min(created_at) from workflow_status").fetchone()[0]
    picked = ",".join("?" if c in ("workflow_uuid", "created_at", "updated_at") else c for c in columns)
    for i in range(total - len(real)):
        source, new = real[i % len(real)], f"copy-{i:06d}"
        at = start - (total - i) * 1000
        values = [
            new if c == "workflow_uuid" else at for c in columns if c in ("workflow_uuid", "created_at", "updated_at")
        ]
        db.execute(f"insert into workflow_status ({','.join(columns)}) select {picked} from workflow_status "
                   "where workflow_uuid = ?", (*values, source))  # fmt: skip
        for table, kept in (("workflow_input", "inputs"), ("workflow_output", "output, error")):
            db.execute(f"insert into {table} (workflow_uuid, {kept}) select ?, {kept} from {table} "
                       "where workflow_uuid = ?", (new, source))  # fmt: skip
    db.commit()
    db.close()
    lines: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        run = json.loads(line)["correlation_id"]
        lines.setdefault(run, []).append(line)
    with log.open("a") as f:
        for i in range(total - len(real)):
            source = real[i % len(real)]
            f.writelines(line.replace(source, f"copy-{i:06d}") + "\n" for line in lines.get(source, []))
    return len(real)


def timed(client: httpx.Client, path: str) -> float:
    began = time.perf_counter()
    answer = client.get(path)
    assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
    return time.perf_counter() - began


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--quick", action="store_true", help="a few seconds: checks the bench still runs (CI)")
    args = ap.parse_args()
    if args.quick:
        args.runs = 100
    with tempfile.TemporaryDirectory(prefix="aeon-ui-bench-") as tmp:
        folder = Path(tmp)
        for run in RUNS:
            aeon(folder, *run)
        log = folder / ".aeon" / "runs.jsonl"
        real = copy_runs(folder / ".aeon" / "aeon.sqlite", log, args.runs)
        megabytes = log.stat().st_size / 1e6
        env = {k: v for k, v in os.environ.items() if not k.startswith("AEON_")}
        began = time.perf_counter()
        server = subprocess.Popen([*AEON, "ui", "--port", "0"], cwd=folder, env=env, stderr=subprocess.PIPE, text=True)
        try:
            assert server.stderr is not None
            line = server.stderr.readline()
            started = time.perf_counter() - began
            url = re.search(r"http://\S+/", line)
            assert url is not None, line
            with httpx.Client(base_url=url.group(0), timeout=300) as client:
                first = timed(client, "/")
                indexed = timed(client, "/?status=ttl_expired")
                middle = (args.runs - real) // 2 // real * real + 1  # a copy of the two-pass run (second of RUNS)
                two_pass = client.get(f"/?q=copy-{middle:06d}").text
                run_id = re.search(r'href="/runs/(copy-[^"]+)"', two_pass)
                assert run_id is not None
                first_run = timed(client, f"/runs/{run_id.group(1)}")
                last_page = min(100, max(1, args.runs // 100))
                pages = {
                    "runs, page 1": "/",
                    f"runs, page {last_page}": f"/?page={last_page}",
                    "status ttl_expired": "/?status=ttl_expired",
                    "text 'once more'": "/?q=once+more",
                    "one run (timeline), shown again": f"/runs/{run_id.group(1)}",
                    "another run (timeline)": f"/runs/copy-{middle + 7:06d}",
                    "batches": "/batches",
                }
                figures = {
                    name: statistics.median(timed(client, path) for _ in range(5)) for name, path in pages.items()
                }
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"{args.runs} runs ({real} real scripted runs, the rest copies of their records), a {megabytes:.0f} MB log")
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"  aeon ui up (listening)            {started:7.2f} s")
    print(f"  first runs page after start       {first * 1000:7.0f} ms")
    print(f"  first filtered page (full index)  {indexed * 1000:7.0f} ms")
    print(f"  first run page (indexes the log)  {first_run * 1000:7.0f} ms")
    for name, seconds in figures.items():
        print(f"  {name:<32}  {seconds * 1000:7.0f} ms (median of 5)")


if __name__ == "__main__":
    main()
