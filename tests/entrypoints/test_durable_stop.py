"""Ctrl-C or SIGTERM on `aeon run --durable` leaves the run pending on the record (not ended as interrupted), and
`aeon resume` finishes it with a whole log: the stop writes no record of its own."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import yaml
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
        assert [r["status"] for r in runs(tmp_path)] == ["running"]  # its process is alive
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    [listed] = runs(tmp_path)
    assert listed["status"] == "interrupted"  # its process is gone: resumable
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


SLOW_EXIT = """
import atexit
import os
import pathlib
import time

from aeon.adapters.tools.decorator import tool


@tool
def unused(text: str) -> str:
    \"\"\"A tools module needs one tool.\"\"\"
    return text


@atexit.register
def _slow_goodbye() -> None:  # like a local model's server being stopped on the way out
    pathlib.Path(os.environ["AEON_TEST_EFFECTS"] + ".leaving").touch()
    time.sleep(5)
"""


@pytest.mark.parametrize("durable", ["--durable", "--no-durable"])
def test_a_second_ctrl_c_while_the_process_leaves_ends_it_at_once_without_a_traceback(
    tmp_path: Path, durable: str
) -> None:
    cfg = scripted(tmp_path, "stop.yaml", ANSWERS)
    (tmp_path / "slow_exit.py").write_text(SLOW_EXIT)
    doc = yaml.safe_load(cfg.read_text())
    doc["tools"]["modules"].append("slow_exit")
    cfg.write_text(yaml.safe_dump(doc))
    proc = start(tmp_path, "run", "wait", "--config", cfg, durable)
    try:
        wait_for((tmp_path / "effects.txt.started").exists, what="the waiting tool")
        (tmp_path / "effects.txt.release").touch()  # the tool's thread ends: only the exit hook keeps the process
        proc.send_signal(signal.SIGINT)
        wait_for((tmp_path / "effects.txt.leaving").exists, what="the exit hooks")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=4)  # well before the exit hook's 5 s
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
