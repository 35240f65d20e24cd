"""Serve load: N runs POSTed to two `aeon serve` processes sharing one Postgres system database; once about half the
runs have ended, the server with more runs under way is SIGKILLed (the other takes over its runs when its lease,
--recover-after seconds, expires; or it is started again with --restart). Checks that every run ends exactly once,
none lost, that the side-effect tool ran once per run, and that a client following a run's events across the kill
(Last-Event-ID on the other server) gets each record once; then the same runs through `aeon batch` in one process on
a fresh database of the same server, the figures side by side.

The model is scripted (config/scripted-load.yaml): each run makes 2 LLM calls and one call of `tally`
(bench/helpers/serve_load_tools.py), which appends a line with a fresh token to tally.txt and returns the token, so each
line is tied to the run that recorded it. The end of a run is its `run_end` record in the shared audit log (the record
the end event of GET /runs/{id}/events is sent for); latency is from the client sending the POST to that record, and the
serve figures count from the first POST (the servers already up), so they include the wait for the lease. Postgres:
AEON_TEST_POSTGRES_URL when set, else a throwaway server from the OS binaries (tests/support/throwaway_postgres.py);
with neither it prints `skipped:` and why.
Run: `.venv/bin/python bench/serve_load.py [--runs 1000] [--clients 16] [--restart]` (--quick: 60 runs, for CI).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import httpx
import yaml

from helpers import serve_load_follow, serve_load_record, serve_load_tools

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))
from throwaway_postgres import NoPostgres, fresh_database, throwaway_postgres  # noqa: E402

AEON = [sys.executable, "-c", "from aeon.entrypoints.cli import main; main()"]
CONFIG = ROOT / "config" / "scripted-load.yaml"


def bench_config(folder: Path, database_url: str, recover_after: float) -> Path:
    """config/scripted-load.yaml with its paths made absolute, the system database and the log in `folder`."""
    doc = yaml.safe_load(CONFIG.read_text())
    doc["llm"]["script"] = str((CONFIG.parent / doc["llm"]["script"]).resolve())
    doc["tools"]["modules"] = [str((CONFIG.parent / m).resolve()) for m in doc["tools"]["modules"]]
    doc["durable"] = {"database_url": database_url, "recover_after_seconds": recover_after}
    doc["log"] = {"path": str(folder / "runs.jsonl")}
    path = folder / "load.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("AEON_") and not k.endswith("_API_KEY")}


@dataclass
class Server:
    name: str
    folder: Path
    config: Path
    process: subprocess.Popen[bytes] | None = None
    url: str = ""

    def start(self) -> None:
        err = self.folder / f"serve-{self.name}.err"
        with err.open("ab") as sink:
            self.process = subprocess.Popen(
                [*AEON, "serve", "--port", "0", "--config", str(self.config), "--name", self.name],
                cwd=self.folder, env=environment(), stdout=subprocess.DEVNULL, stderr=sink,
            )  # fmt: skip
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and self.process.poll() is None:
            said = err.read_text(errors="replace")
            found = re.findall(r"serving on (http://\S+)/ ", said)
            if found:
                self.url = found[-1]
                return
            time.sleep(0.05)
        raise SystemExit(f"aeon serve {self.name} did not start: {err.read_text(errors='replace')[-2000:]}")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


def post_all(servers: list[Server], n: int, clients: int) -> tuple[dict[str, float], float, int]:
    """POST n runs, alternately to each server (to the other when one refuses: killed); run id -> when sent; the
    seconds all took; how many went to the other server."""
    sent: dict[str, float] = {}
    moved = 0
    with ExitStack() as stack:
        http = [stack.enter_context(httpx.Client(base_url=s.url, timeout=60)) for s in servers]

        def one(i: int) -> tuple[str, float, bool]:
            for turn in range(len(http)):
                at = time.time()
                try:
                    answer = http[(i + turn) % len(http)].post("/runs", json={"request": f"count one visit (#{i})"})
                except httpx.TransportError:
                    continue
                assert answer.status_code == 202, answer.text
                return answer.json()["run_id"], at, turn > 0
            raise SystemExit(f"no server accepted run #{i}")

        t0 = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            for run_id, at, elsewhere in pool.map(one, range(n)):
                sent[run_id], moved = at, moved + elsewhere
        return sent, time.perf_counter() - t0, moved


def final_documents(server: Server, run_ids: list[str], clients: int) -> dict[str, dict[str, Any]]:
    """GET /runs/{id} of every run from the live server."""
    with httpx.Client(base_url=server.url, timeout=60) as http, ThreadPoolExecutor(clients) as pool:

        def one(run_id: str) -> dict[str, Any]:
            answer = http.get(f"/runs/{run_id}")
            assert answer.status_code == 200, answer.text
            doc: dict[str, Any] = answer.json()
            return doc

        return dict(zip(run_ids, pool.map(one, run_ids), strict=True))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] if ordered else float("nan")


def serve_part(args: argparse.Namespace, folder: Path, database_url: str) -> dict[str, Any]:
    """The runs POSTed to two servers, one killed half-way; figures and checks."""
    cfg = bench_config(folder, database_url, args.recover_after)
    servers = [Server(name, folder, cfg) for name in ("load-a", "load-b")]
    ends = serve_load_record.Ends(folder / "runs.jsonl")
    try:
        for server in servers:
            server.start()
        t0 = time.time()
        sent, posting, moved = post_all(servers, args.runs, args.clients)
        order = list(sent)
        picked = {order[i]: i % 2 for i in range(args.runs // 2, args.runs, max(1, args.runs // 2 // args.follow))}
        followers, followed = serve_load_follow.follow_all([s.url for s in servers], picked, args.timeout)
        ended_then, under_way = serve_load_record.wait_for_half(database_url, args.runs, args.timeout)
        doomed = max(servers, key=lambda s: under_way.get(f"serve-{s.name}", 0))  # the busier one
        survivor = servers[1 - servers.index(doomed)]
        killed_at = time.time()
        doomed.kill()
        if args.restart:
            doomed.start()
        silent = ends.wait_all(survivor.url, list(sent), args.timeout)
        docs = final_documents(survivor, list(sent), args.clients)
        for thread in followers:
            thread.join(60)
    finally:
        for server in servers:
            server.stop()
    statuses = serve_load_record.check_exactly_once(folder, ends, docs, silent)
    problems = serve_load_follow.check_streams(followed, set(silent))
    if problems or len(followed) != len(picked):
        raise SystemExit(f"event streams of {len(picked)} runs followed: {len(followed)} ended; " + "; ".join(problems))
    streamed = [f.end_at - sent[f.run_id] for f in followed if f.end_at is not None]
    taken = serve_load_record.runs_recovered(database_url)
    if not taken:
        raise SystemExit(f"the kill of {doomed.name} cut off no run: nothing was taken over, so nothing was checked")
    last = max(max(t) for t in ends.seen.values())
    latency = [ends.seen[r][0] - at for r, at in sent.items() if r in ends.seen]
    return {
        "accepted/s": args.runs / posting, "finished/s": args.runs / (last - t0), "wall": last - t0,
        "before kill": ended_then / (killed_at - t0),
        "p50": percentile(latency, 50), "p99": percentile(latency, 99), "statuses": statuses,
        "killed": f"{doomed.name} after {killed_at - t0:.1f} s, {ended_then}/{args.runs} runs ended and "
        f"{under_way.get('serve-' + doomed.name, 0)} under way on it; {taken} runs recovered (DBOS "
        f"recovery_attempts > 1); {moved} POSTs went to the other server",
        "followed": f"{len(followed)} runs' GET /runs/{{id}}/events followed to their end event (seqs whole, none "
        f"twice; {sum(f.reconnects for f in followed)} reconnects with Last-Event-ID): POST → end event p50 "
        f"{percentile(streamed, 50):.2f} s, max {max(streamed):.2f} s",
    }  # fmt: skip


def batch_part(args: argparse.Namespace, folder: Path, database_url: str) -> dict[str, Any]:
    """The same runs through `aeon batch` in one process on a database of the same server."""
    cfg = bench_config(folder, database_url, args.recover_after)
    requests = folder / "requests.jsonl"
    requests.write_text("".join(json.dumps({"request": f"count one visit (#{i})"}) + "\n" for i in range(args.runs)))
    ends = serve_load_record.Ends(folder / "runs.jsonl")
    t0 = time.time()
    done = subprocess.run(
        [*AEON, "batch", str(requests), "--concurrency", str(args.concurrency), "--config", str(cfg), "--out",
         str(folder / "out.jsonl")], cwd=folder, env=environment(), capture_output=True, text=True,
        timeout=args.timeout,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"aeon batch failed ({done.returncode}): {done.stderr[-2000:]}")
    ends.read()
    results = [json.loads(line) for line in (folder / "out.jsonl").read_text().splitlines()]
    lines = (folder / serve_load_tools.TALLY).read_text().splitlines()
    assert len(results) == len(ends.seen) == len(lines) == args.runs, (len(results), len(ends.seen), len(lines))
    first, last = min(min(t) for t in ends.starts.values()), max(max(t) for t in ends.seen.values())
    latency = [t[0] - first for t in ends.seen.values()]
    statuses: dict[str, int] = {}
    for r in results:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {
        "accepted/s": float("nan"), "finished/s": args.runs / (last - first), "wall": last - first,
        "before kill": float("nan"),
        "p50": percentile(latency, 50), "p99": percentile(latency, 99), "statuses": statuses,
        "startup": first - t0,
    }  # fmt: skip


def report(args: argparse.Namespace, serve: dict[str, Any], batch: dict[str, Any]) -> None:
    print(f"{args.runs} runs (scripted model: 2 LLM calls and one side-effect tool call each), Postgres system "
          f"database; aeon batch --concurrency {args.concurrency}; {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"{'':32}{'2 × aeon serve, 1 killed':>26}{'aeon batch, 1 process':>24}")
    rows = [
        ("accepted/s (POST rate)", "accepted/s", "{:.0f}"),
        ("runs finished/s", "finished/s", "{:.1f}"),
        ("runs finished/s until the kill", "before kill", "{:.1f}"),
        ("first POST/start → last end, s", "wall", "{:.1f}"),
        ("p50 POST → end, s", "p50", "{:.2f}"),
        ("p99 POST → end, s", "p99", "{:.2f}"),
    ]
    for label, key, fmt in rows:
        b = "-" if batch[key] != batch[key] else fmt.format(batch[key])
        print(f"{label:32}{fmt.format(serve[key]):>26}{b:>24}")
    print(f"serve: killed {serve['killed']}; final statuses {serve['statuses']}")
    print(f"serve: {serve['followed']}")
    print(f"batch: final statuses {batch['statuses']}; its times are from its first run's start (all queued at "
          f"once), {batch['startup']:.1f} s after the command started (imports, DBOS launch)")  # fmt: skip
    print(
        "exactly once: every run ended once, none lost; tally ran once per completed run, never twice; the runs the "
        "kill cut off inside tally (not idempotent) end stopped with no end record, left out of the times"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=16, help="POSTs in flight at once")
    ap.add_argument("--concurrency", type=int, default=16, help="aeon batch --concurrency")
    ap.add_argument("--recover-after", type=float, default=5.0, help="durable.recover_after_seconds (the lease)")
    ap.add_argument("--follow", type=int, default=20, help="runs whose event stream a client follows")
    ap.add_argument("--restart", action="store_true", help="start the killed server again (else left dead)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--quick", action="store_true", help="60 runs: checks the bench and exactly-once (CI)")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.recover_after, args.timeout, args.follow = 60, 2.0, 100, 6
    try:
        with throwaway_or_given() as server, TemporaryDirectory(prefix="aeon-load-") as d:
            (Path(d) / "serve").mkdir(), (Path(d) / "batch").mkdir()
            with fresh_database(server) as url:
                served = serve_part(args, Path(d) / "serve", url)
            with fresh_database(server) as url:
                batched = batch_part(args, Path(d) / "batch", url)
    except NoPostgres as exc:
        print(f"skipped: no Postgres: {exc}")
        return
    report(args, served, batched)


def throwaway_or_given() -> Any:
    given = os.environ.get("AEON_TEST_POSTGRES_URL", "")
    return nullcontext(given) if given else throwaway_postgres()


if __name__ == "__main__":
    main()
