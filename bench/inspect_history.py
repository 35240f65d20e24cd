"""`aeon inspect` on a large history: wall time and peak memory of the command, and the refusal of a dense one.

A real scripted run (config/scripted-two-pass.yaml) writes a history; its first pass is then repeated, each copy
with 10 tool steps whose outputs are 400 small records, until the file reaches --mb (a 50 MB history from real runs
would take hours of tool calls; inspect reads records, not how they were made). Then `aeon inspect` runs on it in a
child process, and on a file of the same size made of empty lists (refused by the value cap). Prints seconds and
max RSS of each. Run: `.venv/bin/python bench/inspect_history.py [--mb 50] [--quick]`.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
AEON = [sys.executable, "-c", "from aeon.entrypoints.cli import main; main()"]


def aeon(folder: Path, *args: str) -> tuple[int, str, float, int]:
    """The command's exit code, stderr, wall seconds and peak RSS in MiB (from wait4: this child's own)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AEON_")}
    started = time.monotonic()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen([*AEON, *args], cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return child.returncode, err.read().decode(), time.monotonic() - started, usage.ru_maxrss >> 10


def records(n: int, k: int) -> list[dict[str, Any]]:
    return [{"id": i, "name": f"row {k}-{i}", "tags": ["a", "b"], "score": i * 0.5, "ok": i % 2 == 0} for i in range(n)]


def grow(history: dict[str, Any], size: int) -> dict[str, Any]:
    first, passes, written, k = history["passes"][0], [], 0, 0
    while written < size:
        p = copy.deepcopy(first)
        steps = []
        for j in range(10):
            step = {**first["plan_state"]["steps"][0], "step_id": f"s{j}", "step_output": records(400, k)}
            steps.append(step)
            k += 1
        p["pass_number"], p["plan_state"], p["final_plan_state"] = len(passes) + 1, {"steps": steps}, {"steps": steps}
        p["execution_results"] = {s["step_id"]: {"status": "complete", "output": s["step_output"]} for s in steps}
        passes.append(p)
        written += len(json.dumps(p))
    return {**history, "passes": passes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of the history to inspect")
    parser.add_argument("--quick", action="store_true", help="a 3 MB history: checks the bench runs, in seconds")
    args = parser.parse_args()
    mb = 3.0 if args.quick else args.mb
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = str(ROOT / "config" / "scripted-two-pass.yaml")
        request = "calculate the sum of 5 and 10"
        code, err, _, _ = aeon(folder, "run", request, "--config", config, "--history", "h.json")
        if code != 0:
            sys.exit(f"the scripted run failed: {err[-500:]}")
        big = folder / "big.json"
        big.write_text(json.dumps(grow(json.loads((folder / "h.json").read_text()), int(mb * (1 << 20)))))
        dense = folder / "dense.json"
        values = ",".join(["[]"] * (big.stat().st_size // 3))
        dense.write_text(json.dumps({"execution_id": "e", "passes": [{"x": 0}]}).replace("0", f"[{values}]", 1))
        for name, path in (("records", big), ("empty lists", dense)):
            code, err, took, rss = aeon(folder, "inspect", str(path))
            outcome = "ok" if code == 0 else f"exit {code}: {err.strip()[:100]}"
            size = path.stat().st_size / (1 << 20)
            print(f"inspect {size:5.1f} MB history of {name:11}: {took:6.2f} s, max RSS {rss:5d} MiB, {outcome}")


if __name__ == "__main__":
    main()
