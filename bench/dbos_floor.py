"""DBOS's own floor: what one recorded step costs with nothing of Aeon's in it — a workflow of bare async steps
(`DBOS.run_step_async` on a function that returns a short string) on a SQLite system database, with Aeon's engine
settings (WAL, synchronous=NORMAL) and with DBOS's default (rollback journal, synchronous=FULL).

Prints the median µs per step over a few workflows of `--steps` steps each. `bench/durable_overhead.py` compares
with it: what Aeon adds per recorded step beyond this is Aeon's. Run: `.venv/bin/python bench/dbos_floor.py`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from dbos import DBOS, DBOSConfig, SetWorkflowID

from aeon.adapters.durable.engine import sqlite_engine

STEPS = 0


async def bare() -> str:
    return "an instant answer"


@DBOS.workflow(name="floor")
async def floor(steps: int) -> float:
    t0 = time.perf_counter()
    for i in range(steps):
        await DBOS.run_step_async({"name": f"step {i}"}, bare)
    return time.perf_counter() - t0


def measure(url: str, *, tuned: bool, steps: int, runs: int) -> float:
    config: DBOSConfig = {
        "name": "floor",
        "system_database_url": url,
        "system_database_engine": sqlite_engine(url) if tuned else None,
        "log_level": "ERROR",
    }
    DBOS(config=config)
    DBOS.launch()
    try:
        per_step = []
        for i in range(runs + 1):
            with SetWorkflowID(f"floor-{tuned}-{i}"):
                elapsed = DBOS.start_workflow(floor, steps).get_result()
            if i:  # the first one warms up
                per_step.append(elapsed / steps * 1e6)
    finally:
        DBOS.destroy()
    return statistics.median(per_step)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="a few seconds: checks the bench still runs (CI)")
    args = ap.parse_args()
    if args.quick:
        args.steps, args.runs = 10, 1
    with tempfile.TemporaryDirectory() as d:
        tuned = measure(f"sqlite:///{Path(d) / 'tuned.sqlite'}", tuned=True, steps=args.steps, runs=args.runs)
        default = measure(f"sqlite:///{Path(d) / 'default.sqlite'}", tuned=False, steps=args.steps, runs=args.runs)
    print(f"{args.runs} workflows × {args.steps} bare async steps on SQLite")
    print(f"median µs per recorded step, WAL + synchronous=NORMAL (Aeon's): {tuned:8.1f}")
    print(f"median µs per recorded step, DBOS's default journal:             {default:8.1f}")


if __name__ == "__main__":
    main()
