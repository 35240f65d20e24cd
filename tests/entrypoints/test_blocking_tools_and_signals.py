"""A blocking tool cannot hold a run past its caps, and one Ctrl-C (or a SIGTERM) always ends the run on the record.

These run `aeon` as a real process with a user tool that blocks in `time.sleep`, and send real signals. The waits
are the run's own sub-second caps, or polling for the log record that says the blocking tool has started.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

TOOLS = textwrap.dedent(
    '''
    import asyncio
    import time

    from aeon.adapters.tools import tool


    @tool
    def block(seconds: float) -> str:
        """Block the calling thread for `seconds`."""
        time.sleep(seconds)
        return "woke up"


    @tool(timeout=0.3)
    def quick_or_nothing(seconds: float) -> str:
        """Block for `seconds`, but give up after 0.3 s."""
        time.sleep(seconds)
        return "woke up"


    @tool
    async def wait(seconds: float) -> str:
        """Wait asynchronously for `seconds`."""
        await asyncio.sleep(seconds)
        return "woke up"
    '''
)


def setup(tmp_path: Path, tool: str, seconds: float, **run: object) -> list[str]:
    (tmp_path / "slow_tools.py").write_text(TOOLS, encoding="utf-8")
    (tmp_path / "script.yaml").write_text("responses: []\n", encoding="utf-8")
    config = {
        "llm": {"adapter": "scripted", "script": "script.yaml"},
        "tools": {"modules": ["slow_tools"]},
        "run": {"evaluate": False, **run},
        "log": {"path": str(tmp_path / "run.jsonl")},
    }
    (tmp_path / "aeon.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    steps = [
        {"step_id": "s1", "description": "say hi", "tool": "echo", "args": {"text": "hi"}},
        {"step_id": "s2", "description": "block", "tool": tool, "args": {"seconds": seconds}},
        {"step_id": "s3", "description": "say bye", "tool": "echo", "args": {"text": "bye"}},
    ]
    (tmp_path / "plan.json").write_text(json.dumps({"goal": "g", "steps": steps}), encoding="utf-8")
    aeon = [sys.executable, "-c", "from aeon.entrypoints.cli import main; main()"]
    return [*aeon, "run", "do it", "--plan", "plan.json", "--config", "aeon.yaml"]


def records(tmp_path: Path) -> list[dict[str, object]]:
    path = tmp_path / "run.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def started_blocking(tmp_path: Path, deadline: float = 20.0) -> None:
    """Wait until the log shows s1 done (so s2, the blocking tool, is next)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if any(r["event"] == "tool_call" and r.get("step_id") == "s1" for r in records(tmp_path)):
            time.sleep(0.2)  # s2 starts right after s1's record
            return
        time.sleep(0.05)
    raise AssertionError("the run never reached its blocking step")


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("tool", ["block", "wait"])
def test_one_signal_ends_a_run_stuck_in_a_tool_with_run_end_and_the_completed_steps_printed(
    tmp_path: Path, signum: int, code: int, tool: str
) -> None:
    proc = subprocess.Popen(setup(tmp_path, tool, 60), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    started_blocking(tmp_path)
    sent = time.monotonic()
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=15)
    assert time.monotonic() - sent < 5  # one signal, not a second one, and not the tool's 60 s
    assert proc.returncode == code, err.decode()
    assert "Traceback" not in err.decode()
    text = out.decode()
    assert "s1 [complete" in text and "output: hi" in text  # what was done is printed
    assert "interrupted" in text
    end = records(tmp_path)[-1]
    assert end["event"] == "run_end" and end["status"] == "interrupted"


def test_a_blocking_tool_is_abandoned_at_max_seconds(tmp_path: Path) -> None:
    began = time.monotonic()
    proc = subprocess.run(setup(tmp_path, "block", 60, max_seconds=1), cwd=tmp_path, capture_output=True, timeout=30)
    assert time.monotonic() - began < 8  # the cap is 1 s (plus interpreter start), not the tool's 60 s
    assert proc.returncode == 3, proc.stderr.decode()
    s2 = next(r for r in records(tmp_path) if r["event"] == "tool_call" and r["step_id"] == "s2")
    assert "did not finish within" in str(s2["error"]) and "the run's time cap" in str(s2["error"])
    assert records(tmp_path)[-1]["status"] == "ttl_expired"


def test_a_tool_past_its_own_timeout_fails_its_step_and_the_plan_goes_on(tmp_path: Path) -> None:
    proc = subprocess.run(setup(tmp_path, "quick_or_nothing", 60), cwd=tmp_path, capture_output=True, timeout=30)
    assert proc.returncode == 0, proc.stderr.decode()
    calls = {r["step_id"]: r for r in records(tmp_path) if r["event"] == "tool_call"}
    assert calls["s2"]["error"] == "TimeoutError: did not finish within 0.3 s (its timeout); abandoned"
    assert calls["s3"]["output"] == "bye"  # the next step still ran
