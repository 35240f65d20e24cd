"""A durable run killed with SIGKILL mid-phase is finished by `aeon resume`: every LLM call and tool call that
completed before the kill happened exactly once, the result equals an uninterrupted run's, the log is whole."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from durable_harness import aeon, comparable, config, records, runs, start, wait_for
from fake_provider import FakeProvider, serving

PLAN = {
    "goal": "record two things",
    "steps": [
        {"step_id": "s1", "description": "Record one", "tool": "record", "args": {"text": "one"}},
        {"step_id": "s2", "description": "Say what s1 recorded", "agent": "llm"},
        {"step_id": "s3", "description": "Record two", "tool": "record", "args": {"text": "two"}},
        {"step_id": "s4", "description": "Say what s3 recorded", "agent": "llm"},
    ],
}
PROFILE = {
    "reasoning_depth": 2,
    "information_sufficiency": 1.0,
    "expected_tool_usage": "minimal",
    "output_breadth": "narrow",
    "confidence_requirement": "medium",
    "raw_inference": "two records",
}
CONVERGED = {"completeness_score": 1.0, "coherence_score": 1.0, "consistent": True, "explanation": "ok", "issues": []}
ANSWERS = [
    json.dumps({"profile": PROFILE, "plan": PLAN}),  # phase A: the profile and the plan in one answer
    "s1 recorded one.",
    "s3 recorded two.",
    json.dumps({"issues": []}),
    json.dumps(CONVERGED),
]
REQUEST = "record two things"
HELD = 2  # the third call (s4's reasoning) is in flight when the run is killed


def _llm(url: str) -> dict[str, str]:
    return {"adapter": "openai", "base_url": url, "model": "fake"}


def _uninterrupted(tmp_path: Path) -> tuple[dict, list[dict]]:
    base = tmp_path / "reference"
    base.mkdir()
    with serving(FakeProvider(ANSWERS)) as provider:
        cfg = config(base, "ref.yaml", _llm(provider.url))
        done = aeon(base, "run", REQUEST, "--config", cfg, "--durable", "--json", "--history", base / "h.json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    return doc, records(base / "runs.jsonl", doc["correlation_id"])


def test_sigkill_mid_phase_then_resume_repeats_nothing_completed(tmp_path: Path) -> None:
    reference, reference_log = _uninterrupted(tmp_path)
    effects = tmp_path / "effects.txt"
    with serving(FakeProvider(ANSWERS, hold=HELD)) as provider:
        cfg = config(tmp_path, "crash.yaml", _llm(provider.url))
        proc = start(tmp_path, "run", REQUEST, "--config", cfg, "--durable", "--json")
        try:
            wait_for(provider.holding.is_set, what="the held LLM call")
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        finally:
            proc.kill()
        assert proc.returncode == -signal.SIGKILL
        assert effects.read_text() == "one\ntwo\n"  # both tool calls were done before the kill
        [listed] = runs(tmp_path)
        assert listed["status"] == "interrupted"  # its process is gone: resumable
        assert listed["passes"] == 1 and listed["calls"] >= 2  # from the last checkpoint on the record
        provider.release()
        resumed = aeon(tmp_path, "resume", listed["id"], "--json", "--history", tmp_path / "h.json")
        assert resumed.returncode == 0, resumed.stderr
        # every call completed before the kill was sent once; only the one in flight was sent again
        assert len(provider.order) == len(ANSWERS)
        assert provider.resent() == [HELD]
        assert provider.requests == len(ANSWERS) + 1
    assert effects.read_text() == "one\ntwo\n"  # no tool side effect repeated
    doc = json.loads(resumed.stdout)
    assert doc["correlation_id"] == listed["id"]
    assert comparable(doc) == comparable(reference)
    log = records(tmp_path / "runs.jsonl", listed["id"])
    assert [r["seq"] for r in log] == list(range(len(log)))  # whole: no record twice, none missing
    assert [r["event"] for r in log] == [r["event"] for r in reference_log]
    history = json.loads((tmp_path / "h.json").read_text())
    ref_history = json.loads((tmp_path / "reference" / "h.json").read_text())
    assert [[p["phase"] for p in x["phases"]] for x in history["passes"]] == [
        [p["phase"] for p in x["phases"]] for x in ref_history["passes"]
    ]
    assert [r["status"] for r in runs(tmp_path)] == ["completed"]
