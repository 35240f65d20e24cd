"""CLI start: `aeon --version`, `aeon --help` and a scripted run's first LLM call, as ratios to `import httpx`.

The scripted run is timed with --no-durable and durable (the default), which imports and launches DBOS first.

The floor is `python -c "import httpx"`: a bare interpreter that loads the HTTP client every model adapter needs.
Each command is a fresh process, timed from just before it is spawned; the first LLM call's moment is the timestamp
of the run's first llm_call record (the scripted model answers at once, so the record follows the call within
microseconds). The commands take turns, so that a noisy moment hits all of them, and each figure is a median.
Compiled bytecode is cached as an installed package has it (in a temporary PYTHONPYCACHEPREFIX, written by a first
round that is not counted), even where PYTHONDONTWRITEBYTECODE is set: compiling sources is not start-up cost.
Run: `.venv/bin/python bench/cli_start.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUEST = "calculate the sum of 5 and 10"
# The console script pip writes for `aeon`, so the interpreter is the one running this bench (its venv, PYTHONPATH).
AEON = ["-c", "import sys; from aeon.entrypoints.cli import console; sys.argv[0] = 'aeon'; console()"]


def timed(args: list[str], *, cwd: Path, env: dict[str, str]) -> float:
    """Seconds from spawning `python args` to its exit; fails on a non-zero exit."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def first_llm_call(folder: Path, env: dict[str, str], *, durable: bool = False) -> tuple[float, float]:
    """Seconds from spawning `aeon run` (scripted model; not durable, or durable as by default, on the SQLite
    system database the first round made in `folder`) to its first LLM call, and to its exit."""
    log = folder / "runs.jsonl"
    log.unlink(missing_ok=True)
    config = ROOT / "config" / "scripted-demo.yaml"
    mode = "--durable" if durable else "--no-durable"
    args = [*AEON, "run", REQUEST, "--config", str(config), mode, "--log-file", str(log)]
    spawned = time.time()
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, *args], cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    ended = time.perf_counter() - t0
    for line in log.read_text().splitlines():
        record = json.loads(line)
        if record["event"] == "llm_call":
            return datetime.fromisoformat(record["timestamp"]).timestamp() - spawned, ended
    raise SystemExit("the run made no LLM call")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="a few seconds: checks the bench still runs (CI)")
    args = ap.parse_args()
    if args.quick:
        args.runs = 1
    keys = ("floor", "version", "help", "first_call", "run", "durable_first_call", "durable_run")
    figures: dict[str, list[float]] = {k: [] for k in keys}
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        for i in range(args.runs + 1):  # the first round compiles and caches the bytecode
            round_ = {
                "floor": timed(["-c", "import httpx"], cwd=folder, env=env),
                "version": timed([*AEON, "--version"], cwd=folder, env=env),
                "help": timed([*AEON, "--help"], cwd=folder, env=env),
            }
            round_["first_call"], round_["run"] = first_llm_call(folder, env)
            round_["durable_first_call"], round_["durable_run"] = first_llm_call(folder, env, durable=True)
            for key, value in round_.items():
                if i:
                    figures[key].append(value)
    median = {k: statistics.median(v) * 1e3 for k, v in figures.items()}
    floor = median["floor"]
    print(f"runs: {args.runs} of each, taking turns (load average {os.getloadavg()[0]:.2f}); median ms, ratio to floor")
    labels = {
        "floor": 'python -c "import httpx"',
        "version": "aeon --version",
        "help": "aeon --help",
        "first_call": "aeon run (scripted) to its first LLM call",
        "run": "aeon run (scripted), whole process",
        "durable_first_call": "durable aeon run (the default) to 1st call",
        "durable_run": "durable aeon run (the default), whole process",
    }
    for key, label in labels.items():
        print(f"{label:45s} {median[key]:8.1f} ms  {median[key] / floor:5.2f}x")


if __name__ == "__main__":
    main()
