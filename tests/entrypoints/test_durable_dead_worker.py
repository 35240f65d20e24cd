"""A worker killed mid-run and never started again: the waiting batch names the stuck run and the command that
finishes it, and a live worker takes the run over once the dead one's lease has expired."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import yaml
from durable_harness import AEON, env, scripted, start, wait_for

from multipass import first, profile

PLAN = {
    "goal": "wait",
    "steps": [{"step_id": "s1", "description": "Wait", "tool": "wait_for_release", "args": {"text": "done"}}],
}
ANSWERS = [
    first(profile(1, 1.0, "narrow", "low"), json.dumps(PLAN)),
    json.dumps({"issues": []}),
    json.dumps(
        {"completeness_score": 1.0, "coherence_score": 1.0, "consistent": True, "explanation": "ok", "issues": []}
    ),
]


def test_a_dead_workers_run_is_named_then_taken_over_by_a_live_worker(tmp_path: Path) -> None:
    cfg = scripted(tmp_path, "batch.yaml", ANSWERS)
    doc = yaml.safe_load(cfg.read_text())
    cfg.write_text(yaml.safe_dump({**doc, "durable": {"recover_after_seconds": 1}}))
    # the doomed worker's lease: late (the run named stuck) 2 s after its last beat, expired (taken over) after 4 s
    doomed_cfg = tmp_path / "doomed.yaml"
    doomed_cfg.write_text(yaml.safe_dump({**doc, "durable": {"recover_after_seconds": 4}}))
    requests = tmp_path / "one.jsonl"
    requests.write_text(json.dumps({"request": "wait for the release"}) + "\n")
    effects, progress = tmp_path / "effects.txt", tmp_path / "progress.txt"
    out = tmp_path / "out.jsonl"
    with progress.open("w") as err:
        waiting = subprocess.Popen(
            [*AEON, "batch", str(requests), "--config", str(cfg), "--no-serve", "--out", str(out)],
            cwd=tmp_path, env=env(tmp_path), stdout=subprocess.DEVNULL, stderr=err, text=True,
        )  # fmt: skip
    doomed = start(tmp_path, "worker", "--name", "doomed", "--config", doomed_cfg)
    rescuer = None
    try:
        wait_for(lambda: Path(f"{effects}.started").exists(), what="the doomed worker to start the run")
        rescuer = start(tmp_path, "worker", "--name", "rescuer", "--config", cfg)  # it starts while the lease runs
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(30)
        wait_for(lambda: "is stuck" in progress.read_text(), timeout=30, what="the batch to name the stuck run")
        stuck = next(line for line in progress.read_text().splitlines() if "is stuck" in line)
        run_id = stuck.split("run ", 1)[1].split()[0]
        assert run_id.startswith("batch-") and "worker-doomed" in stuck
        assert stuck.endswith(f"aeon resume {run_id}")

        Path(f"{effects}.release").touch()
        assert waiting.wait(60) == 0, progress.read_text()
    finally:
        for proc in (waiting, doomed, rescuer):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)
    [result] = [json.loads(line) for line in out.read_text().splitlines()]
    assert result["status"] == "completed" and result["run_id"] == run_id
    assert progress.read_text().splitlines()[-2].startswith("batch: 1/1 done · 0 running · 0 failed")
