"""A pure tool (`@tool(pure=True)`) is not recorded in a durable run: killed and resumed, the run computes it again,
gives the result an uninterrupted run gives, and says so when the tool answered otherwise the second time."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from durable_harness import aeon, comparable, config, records, runs, start, wait_for
from fake_provider import FakeProvider, serving

REQUEST = "shout and say"
HELD = 2  # the third call (s3's reasoning) is in flight when the run is killed


def _answers(tool: str) -> list[str]:
    plan = {
        "goal": "shout and say",
        "steps": [
            {"step_id": "s1", "description": "Shout one", "tool": tool, "args": {"text": "one"}},
            {"step_id": "s2", "description": "Say what s1 gave", "agent": "llm", "depends_on": ["s1"]},
            {"step_id": "s3", "description": "Say it again", "agent": "llm", "depends_on": ["s2"]},
        ],
    }
    return [json.dumps(plan), "s1 gave it.", "s1 gave it, again."]


def _run_killed_and_resumed(tmp_path: Path, tool: str) -> tuple[dict, str, list[int]]:
    with serving(FakeProvider(_answers(tool), hold=HELD)) as provider:
        llm = {"adapter": "openai", "base_url": provider.url, "model": "fake"}
        cfg = config(tmp_path, "crash.yaml", llm, evaluate=False)
        proc = start(tmp_path, "run", REQUEST, "--config", cfg, "--durable", "--json")
        try:
            wait_for(provider.holding.is_set, what="the held LLM call")
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        finally:
            proc.kill()
        [listed] = runs(tmp_path)
        provider.release()
        resumed = aeon(tmp_path, "resume", listed["id"], "--json")
        assert resumed.returncode == 0, resumed.stderr
    return json.loads(resumed.stdout), listed["id"], provider.resent()


def test_a_pure_tool_is_computed_again_on_resume_and_the_result_is_an_uninterrupted_run_s(tmp_path: Path) -> None:
    reference_dir = tmp_path / "reference"
    reference_dir.mkdir()
    with serving(FakeProvider(_answers("shout"))) as provider:
        llm = {"adapter": "openai", "base_url": provider.url, "model": "fake"}
        cfg = config(reference_dir, "ref.yaml", llm, evaluate=False)
        done = aeon(reference_dir, "run", REQUEST, "--config", cfg, "--durable", "--json")
    assert done.returncode == 0, done.stderr
    reference = json.loads(done.stdout)

    doc, run_id, resent = _run_killed_and_resumed(tmp_path, "shout")
    assert resent == [HELD]  # only the call in flight was sent again
    assert (tmp_path / "effects.txt.pure").read_text() == "one\none\n"  # computed again, not read back
    assert comparable(doc) == comparable(reference) and doc["outputs"]["s1"]["output"] == "ONE"
    assert not any("pure" in w for w in doc["warnings"])
    log = records(tmp_path / "runs.jsonl", run_id)
    assert [r["seq"] for r in log] == list(range(len(log)))


def test_a_pure_tool_that_answers_otherwise_on_resume_is_named_in_the_warnings(tmp_path: Path) -> None:
    doc, _, _ = _run_killed_and_resumed(tmp_path, "drift")
    assert doc["status"] == "completed" and doc["outputs"]["s1"]["output"] == "one 2"
    [warning] = [w for w in doc["warnings"] if "declared pure" in w]
    assert "'drift' (p1.C1.0)" in warning
