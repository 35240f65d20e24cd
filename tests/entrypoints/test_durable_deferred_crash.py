"""A durable run whose answers come at once defers them (durable.defer_answers_under): killed with SIGKILL and
resumed, the answers a written step carried are not asked again, those that were still waiting are, and either
way the result equals an uninterrupted run's and the log is numbered 0..n."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from durable_harness import aeon, comparable, config, records, runs, start, wait_for
from fake_provider import FakeProvider, serving

DEFER = 60.0  # seconds: far more than this provider takes, so that every answer waits for a written step
REQUEST = "think, record, wait"


def _plan(*tools: str) -> str:
    steps: list[dict[str, Any]] = [{"step_id": "s1", "description": "Think first", "agent": "llm"}]
    for i, name in enumerate(tools, start=2):
        steps.append({"step_id": f"s{i}", "description": f"Call {name}", "tool": name, "args": {"text": "one"}})
    return json.dumps({"goal": REQUEST, "steps": steps})


def _llm(url: str) -> dict[str, str]:
    return {"adapter": "openai", "base_url": url, "model": "fake"}


def _killed_and_resumed(
    tmp_path: Path, answers: list[str], *, listed_passes: int
) -> tuple[dict[str, Any], dict[str, Any], list[int]]:
    """An uninterrupted run's result, then a run killed while its last step (wait_for_release) waits, resumed;
    `aeon runs` lists the killed run with the passes its written steps show."""
    base = tmp_path / "reference"
    base.mkdir()
    (base / "effects.txt.release").touch()
    with serving(FakeProvider(answers)) as provider:
        done = aeon(
            base,
            "run",
            REQUEST,
            "--config",
            config(base, "ref.yaml", _llm(provider.url), defer=DEFER, evaluate=False),
            "--json",
        )
    assert done.returncode == 0, done.stderr
    with serving(FakeProvider(answers)) as provider:
        cfg = config(tmp_path, "crash.yaml", _llm(provider.url), defer=DEFER, evaluate=False)
        proc = start(tmp_path, "run", REQUEST, "--config", cfg, "--json")
        try:
            wait_for((tmp_path / "effects.txt.started").exists, what="the waiting tool")
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        finally:
            proc.kill()
        [listed] = runs(tmp_path)
        assert listed["status"] == "interrupted" and listed["passes"] == listed_passes
        (tmp_path / "effects.txt.release").touch()
        resumed = aeon(tmp_path, "resume", listed["id"], "--json")
        assert resumed.returncode == 0, resumed.stderr
        resent = provider.resent()
    doc = json.loads(resumed.stdout)
    log = records(tmp_path / "runs.jsonl", listed["id"])
    assert [r["seq"] for r in log] == list(range(len(log)))  # whole: no record twice, none missing
    assert [r["event"] for r in log] == [r["event"] for r in records(base / "runs.jsonl")]
    return doc, json.loads(done.stdout), resent


def test_answers_carried_by_the_step_before_a_tool_with_effects_are_not_asked_again(tmp_path: Path) -> None:
    doc, reference, resent = _killed_and_resumed(
        tmp_path, [_plan("record", "wait_for_release"), "thought."], listed_passes=1
    )
    # the plan's and s1's answers and the pass's checkpoint (which `aeon runs` read) rode with the step written
    # before `record` ran
    assert resent == []
    assert (tmp_path / "effects.txt").read_text() == "one\n"  # and `record` did not run twice
    assert comparable(doc) == comparable(reference)


def test_answers_still_waiting_at_the_crash_are_asked_again(tmp_path: Path) -> None:
    doc, reference, resent = _killed_and_resumed(tmp_path, [_plan("wait_for_release"), "thought."], listed_passes=0)
    # nothing had been written (`aeon runs` knew of no pass yet): both answers were asked again, as
    # durable.defer_answers_under allows
    assert resent == [0, 1]
    assert comparable(doc) == comparable(reference)
