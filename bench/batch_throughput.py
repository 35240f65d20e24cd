"""Batch throughput: `aeon batch` of 100 requests at --concurrency 10 against a fake OpenAI-compatible provider that
answers every call in 200 ms, compared with the ideal (total LLM latency / concurrency). Target: within 1.3×.

The wall time is `aeon batch` from its start (imports included) to the results file, on an existing system
database. The provider runs in its own process (tests/support/fake_provider.py), so that it takes no CPU from Aeon's.
`--workers K` adds K `aeon worker` processes serving the same queue (one Aeon process needs about 0.1 s of CPU per
run, so at 10 runs at once it is CPU-bound about as soon as it is latency-bound). Also printed: the CPU Aeon's
processes used and the machine's load average, since on a shared machine the figure depends on both.
Run: `.venv/bin/python bench/batch_throughput.py [--runs 100] [--concurrency 10] [--workers K]`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
AEON = [sys.executable, "-c", "from aeon.entrypoints.cli import main; main()"]
SERVER = """
import sys, time, yaml
sys.path.insert(0, {tests!r})
from fake_provider import FakeProvider, serving
script = yaml.safe_load(open({script!r}))["responses"]
kinds = dict(zip(["profile_and_plan", "step_result", "evaluation"], script))
with serving(FakeProvider(kinds=kinds, delay={delay})) as p:
    print(p.url, flush=True)
    sys.stdin.read()
    print(p.requests, flush=True)
"""
CALLS_PER_RUN = 3  # config/scripts/sum-5-and-10.yaml: profile and plan, one reasoning step, evaluation


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=10)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="a few seconds: checks the bench still runs (CI)")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.concurrency, args.latency = 10, 5, 0.05
    code = SERVER.format(
        tests=str(ROOT / "tests/support"), script=str(ROOT / "config/scripts/sum-5-and-10.yaml"), delay=args.latency
    )
    load = os.getloadavg()
    server = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        cfg = folder / "bench.yaml"
        cfg.write_text(
            yaml.safe_dump(
                {
                    "llm": {"adapter": "openai", "base_url": url, "model": "fake"},
                    "run": {"ttl": 1},
                    "log": {"path": str(folder / "runs.jsonl")},
                }
            )
        )
        requests = folder / "requests.jsonl"
        requests.write_text("".join(json.dumps({"request": f"sum of 5 and 10, #{i}"}) + "\n" for i in range(args.runs)))
        env = {k: v for k, v in os.environ.items() if not k.startswith("AEON_")}
        workers = [
            subprocess.Popen([*AEON, "worker", "--name", f"bench{i}"], cwd=folder, env=env, stderr=subprocess.DEVNULL)
            for i in range(args.workers)
        ]
        # the system database exists, as it does after a first durable command (a first launch creates its schema)
        subprocess.run([*AEON, "runs"], cwd=folder, env=env, capture_output=True, check=True)
        t0, cpu0 = time.perf_counter(), _children_cpu()
        done = subprocess.run(
            [*AEON, "batch", str(requests), "--concurrency", str(args.concurrency), "--config", str(cfg)],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - t0
        for w in workers:
            w.terminate()
            w.wait()
        cpu = _children_cpu() - cpu0  # the batch process and the workers (the provider is still running)
        assert done.returncode == 0, done.stderr[-2000:]
        if os.environ.get("KEEP_LOG"):
            (Path(os.environ["KEEP_LOG"])).write_bytes((folder / "runs.jsonl").read_bytes())
        results = [json.loads(line) for line in (folder / "requests.results.jsonl").read_text().splitlines()]
    server.stdin.close()
    sent = int(server.stdout.readline())
    server.wait()
    assert len(results) == args.runs and all(r["status"] == "completed" for r in results), results[0]
    ideal = args.runs * CALLS_PER_RUN * args.latency / args.concurrency
    print(
        f"{args.runs} runs × {CALLS_PER_RUN} LLM calls at {args.latency * 1000:.0f} ms, concurrency "
        f"{args.concurrency}, {1 + args.workers} process(es) serving; {sent} calls reached the provider"
    )
    print(f"wall time (aeon batch, from start to results file): {elapsed:.2f} s")
    print(f"ideal (total LLM latency / concurrency):             {ideal:.2f} s")
    print(f"ratio: {elapsed / ideal:.2f}x (target ≤ 1.3x)")
    print(
        f"CPU used by Aeon's processes: {cpu:.2f} s ({cpu / args.runs * 1000:.0f} ms per run); "
        f"load average before/after: {load[0]:.2f}/{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
