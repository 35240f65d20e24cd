"""What `aeon run` prints says what happened in words a user reads: which cap stopped the run, why a pass did not
converge, no requirement ids; colour on a terminal and none in a pipe; a scripted demo owns up to its script."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from cli_harness import CONFIG_DIR, DEMO_CONFIG, REQUEST, SUM_STEP, assert_exit, invoke, plan_json, scripted_config
from multipass import first, profile, verdict

pytestmark = pytest.mark.usefixtures("isolated_env")
DEMOS = sorted(CONFIG_DIR.glob("scripted-*.yaml"))


def test_a_run_stopped_by_the_llm_call_cap_says_so_not_ttl_expired(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [plan_json(SUM_STEP), "unused"], run={"max_llm_calls": 1})
    with_llm_step = tmp_path / "plan.json"
    with_llm_step.write_text(plan_json(SUM_STEP, {"step_id": "s2", "description": "explain", "agent": "llm"}))
    result = invoke("run", REQUEST, "--config", config, "--max-llm-calls", "0", "--plan", with_llm_step)
    assert_exit(result, 3)
    assert "stopped early: the LLM-call cap was reached" in result.stdout
    assert "ttl_expired:" not in result.stdout and "TTL 0/" not in result.stdout
    doc = json.loads(invoke("run", REQUEST, "--config", config, "--max-llm-calls", "0", "--json").stdout)
    assert doc["ttl_expiration"]["cap"] == "max_llm_calls"


def test_a_one_pass_run_reports_passes_used_not_ttl_left(tmp_path: Path) -> None:
    result = invoke("run", REQUEST, "--config", DEMO_CONFIG)
    assert_exit(result, 0)
    assert "completed · 1 pass (cap 3) · 3 LLM calls (cap 30)" in result.stdout
    assert "TTL" not in result.stdout


def test_a_verdict_names_the_fact_behind_incomplete_beside_the_models_scores(tmp_path: Path) -> None:
    failing = {**SUM_STEP, "args": {"expression": "5 +"}}
    script = [first(profile(1, 1.0), plan_json(failing)), json.dumps({"issues": []}), verdict(True)]
    config = scripted_config(tmp_path, script, run={"evaluate": True, "ttl": 1})
    result = invoke("run", REQUEST, "--config", config)
    assert_exit(result, 3)
    assert "not converged: incomplete (step s1 failed), coherent, consistent · model's scores: completeness 1.00" in (
        result.stdout
    )


@pytest.mark.parametrize("config", DEMOS, ids=[d.stem for d in DEMOS])
def test_no_requirement_ids_reach_a_user(tmp_path: Path, config: Path) -> None:
    history = tmp_path / "h.json"
    # in this process: --no-durable, so that a demo whose tool needs approval denies it instead of leaving the
    # process (a durable run with nobody to ask waits on the record, and its process exits 6)
    args = ("--config", config, "--no-durable")
    result = invoke("run", REQUEST, *args, "--history", history, "--ttl", "9", "--max-llm-calls", "200")
    shown = result.stdout + result.stderr + invoke("run", REQUEST, *args, "--json", "-q").stdout
    if history.exists():
        shown += invoke("inspect", history).stdout
    assert "FR-" not in shown


def test_a_scripted_demo_says_it_answers_its_own_request_whatever_is_typed() -> None:
    result = invoke("run", "multiply 3 by 4", "--config", DEMO_CONFIG, "--json")
    assert_exit(result, 0)
    note = "this scripted model answers 'calculate the sum of 5 and 10' whatever is asked"
    assert note in result.stderr and any(note in w for w in json.loads(result.stdout)["warnings"])
    assert note not in invoke("run", REQUEST, "--config", DEMO_CONFIG).stderr  # the request it was written for


def aeon(*args: str, tty: bool) -> str:
    """`aeon run` as a real process, its stdout a pseudo-terminal or a pipe; what it printed."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    env["TERM"] = "xterm-256color"
    cmd = [sys.executable, "-c", "from aeon.entrypoints.cli import main; main()", *args]
    if not tty:
        return subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    main, child = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=child, stderr=subprocess.DEVNULL, env=env)
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 4096)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=30)
    os.close(main)
    return b"".join(chunks).decode()


def test_output_is_coloured_on_a_terminal_and_plain_in_a_pipe(tmp_path: Path) -> None:
    args = ("run", REQUEST, "--config", str(DEMO_CONFIG), "--log-file", str(tmp_path / "run.jsonl"))
    assert "\x1b[" in aeon(*args, tty=True)
    piped = aeon(*args, tty=False)
    assert "\x1b[" not in piped and "answer: The sum of 5 and 10 is 15." in piped
