"""Durability overhead: the same 10-step plan (instant scripted LLM, JSONL log on) run plainly and as a durable
DBOS workflow on SQLite, alternating runs. The durable run records what recovery needs: its answers (which come at
once, so they wait for a step that must be written: durable.defer_answers_under), its pass's checkpoint (kept with
the outcome) and no pure tool's call; `--defer 0` writes every answer as a step of its own.

Prints the median microseconds per executed step for both and their ratio (target ≤ 1.3×), plus the DBOS steps one
run writes. Both runs are built the same way (settings → container → orchestrator), so the difference is what
durability costs. In the same process, DBOS's own floor: the median cost of a bare recorded step (a workflow of
steps that do nothing, bench/dbos_floor.py), and what a durable run costs beyond the plain one in those units.
Run: `.venv/bin/python bench/durable_overhead.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import yaml
from dbos import DBOS, SetWorkflowID

from aeon.adapters.durable import ops
from aeon.adapters.durable.process import spec_for
from aeon.application.results import RunResult
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.container import build_container, opened, provided
from aeon.entrypoints.durable.factory import process
from dbos_floor import floor
from overhead import STEPS, _plan

ANSWERS = [_plan()] + ["an instant answer"] * (STEPS // 5)


def _config(folder: Path, defer: float | None = None) -> Path:
    script = folder / "script.yaml"
    script.write_text(yaml.safe_dump({"responses": ANSWERS}))
    cfg = folder / "bench.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "llm": {"adapter": "scripted", "script": str(script)},
                "run": {"ttl": 1, "max_llm_calls": 50, "evaluate": False, "max_plan_steps": STEPS},
                "durable": {
                    "database_url": f"sqlite:///{folder / 'bench.sqlite'}",
                    **({"defer_answers_under": defer} if defer is not None else {}),
                },
            }
        )
    )
    return cfg


def plain_run(cfg: Path, log: Path) -> float:
    t0 = time.perf_counter()
    container = build_container(load_settings(cfg, {"log.path": str(log)}))

    async def run() -> RunResult:
        async with opened(container):
            return await (await provided(container.orchestrator)).run("benchmark")

    result = asyncio.run(run())
    elapsed = time.perf_counter() - t0
    assert result.status == "completed", result.error
    return elapsed


def build_only(cfg: Path, log: Path) -> float:
    """What both runs spend before the kernel starts: settings, container, tool registry, orchestrator."""
    t0 = time.perf_counter()
    container = build_container(load_settings(cfg, {"log.path": str(log)}))

    async def build() -> None:
        async with opened(container):
            await provided(container.orchestrator)

    asyncio.run(build())
    return time.perf_counter() - t0


def durable_run(cfg: Path, log: Path) -> float:
    spec = spec_for("benchmark", cfg, {}, log_path=log, plan=None)
    t0 = time.perf_counter()
    outcome = ops.start(spec)
    elapsed = time.perf_counter() - t0
    assert outcome.result is not None and outcome.result.status == "completed", outcome
    return elapsed


def floor_step(i: int, steps: int = 100) -> float:
    """µs per bare recorded step: a workflow of `steps` steps that do nothing, on the same engine."""
    with SetWorkflowID(f"floor-{i}"):
        elapsed: float = DBOS.start_workflow(floor, steps).get_result()
    return elapsed / steps * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--defer", type=float, default=None, help="durable.defer_answers_under (default: base.yaml's)")
    ap.add_argument("--quick", action="store_true", help="a few seconds: checks the bench still runs (CI)")
    args = ap.parse_args()
    if args.quick:
        args.runs = 2
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        cfg = _config(folder, args.defer)
        settings = load_settings(cfg)
        plain, durable, build, bare = [], [], [], []
        with process().engine(settings, "bench") as engine:
            durable_run(cfg, folder / "warm.jsonl")  # first run: imports, schema
            plain_run(cfg, folder / "warm-plain.jsonl")
            for i in range(args.runs):  # alternating, so that a noisy moment hits both
                plain.append(plain_run(cfg, folder / f"p{i}.jsonl") / STEPS * 1e6)
                durable.append(durable_run(cfg, folder / f"d{i}.jsonl") / STEPS * 1e6)
                build.append(build_only(cfg, folder / f"b{i}.jsonl") / STEPS * 1e6)
                bare.append(floor_step(i))
            last = engine.client.list_workflows(name="aeon.run", sort_desc=True, limit=1)[0].workflow_id
            steps = engine.step_names(last)
    p, q, b = statistics.median(plain), statistics.median(durable), statistics.median(build)
    f = statistics.median(bare)
    print(f"runs: {args.runs} × {STEPS}-step plan (instant scripted LLM, JSONL log on), SQLite system database")
    kinds = {k: sum(s.startswith(k) for s in steps) for k in ("llm", "tool", "checkpoint")}
    print(f"DBOS steps written per durable run: {len(steps)} ({kinds})")
    print(f"median µs per executed step, plain:    {p:9.1f}")
    print(f"median µs per executed step, durable:  {q:9.1f}")
    print(f"durability overhead ratio (durable / plain, per executed step): {q / p:.2f}x (target ≤ 1.3x)")
    print(
        f"durability adds {q - p:.0f} µs per executed step ({(q - p) * STEPS / 1000:.1f} ms per run); building "
        f"settings and container is {b:.0f} µs of the plain figure"
    )
    print(
        f"DBOS floor (a bare recorded step, same process): {f:.0f} µs; a durable run adds "
        f"{(q - p) * STEPS / f:.1f} of them to the plain run ({len(steps)} written steps, plus the workflow's start "
        "and end)"
    )


if __name__ == "__main__":
    main()
