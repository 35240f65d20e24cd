"""Ctrl-C or SIGTERM on `aeon run --durable` leaves the run pending on the record (not ended as interrupted), and
`aeon resume` finishes it with a whole log: the stop writes no record of its own."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from durable_harness import aeon, records, runs, scripted, start, wait_for

from multipass import first, profile

PLAN = {
    "goal": "wait",
    "steps": [{"step_id": "s1", "description": "Wait", "tool": "wait_for_release", "args": {"text": "done"}}],
}
CONVERGED = {"completeness_score": 1.0, "coherence_score": 1.0, "consistent": True, "explanation": "ok", "issues": []}
ANSWERS = [first(profile(1, 1.0, "narrow", "low"), json.dumps(PLAN)), json.dumps({"issues": []}), json.dumps(CONVERGED)]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_durable_run_stays_pending_and_resumes_whole(tmp_path: Path, signum: int, code: int) -> None:
    cfg = scripted(tmp_path, "stop.yaml", ANSWERS)
    proc = start(tmp_path, "run", "wait", "--config", cfg, "--durable")
    try:
        wait_for((tmp_path / "effects.txt.started").exists, what="the waiting tool")
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    [listed] = runs(tmp_path)
    assert listed["status"] == "pending"
    assert f"aeon resume {listed['id']}" in err
    (tmp_path / "effects.txt.release").touch()
    done = aeon(tmp_path, "resume", listed["id"], "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    log = records(tmp_path / "runs.jsonl", listed["id"])
    events = [r["event"] for r in log]
    assert [r["seq"] for r in log] == list(range(len(log)))
    assert events.count("run_start") == 1 and events.count("run_end") == 1
    assert log[-1]["event"] == "run_end" and log[-1]["status"] == "completed"
