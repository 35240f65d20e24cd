"""`aeon batch`: several requests in one process through one model client (a local server stays warm)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aeon.adapters.llm.scripted import ScriptedLLM

from cli_harness import REQUEST, SUM_STEP, assert_exit, invoke, log_of, plan_json, records, scripted_config

PROFILE = json.dumps(
    {
        "reasoning_depth": 1,
        "information_sufficiency": 1.0,
        "expected_tool_usage": "minimal",
        "output_breadth": "narrow",
        "confidence_requirement": "low",
        "raw_inference": "depth 1 task",
    }
)
EVALUATION = json.dumps(
    {"completeness_score": 1.0, "coherence_score": 1.0, "consistent": True, "explanation": "done", "issues": []}
)
ONE_RUN = [PROFILE, plan_json(SUM_STEP), EVALUATION]


def test_every_request_runs_through_one_model_client_closed_once_after_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[int] = []

    async def aclose(self: ScriptedLLM) -> None:
        closed.append(len(self.requests))

    monkeypatch.setattr(ScriptedLLM, "aclose", aclose)
    requests = tmp_path / "requests.txt"
    requests.write_text(f"{REQUEST}\n# not a request\n\n{REQUEST}\n")
    config = scripted_config(tmp_path, ONE_RUN * 2, run={"evaluate": True})
    out = invoke("batch", requests, "--config", config, "-q")
    assert_exit(out, 0)
    docs: list[dict[str, Any]] = [json.loads(line) for line in out.stdout.splitlines()]
    assert [d["status"] for d in docs] == ["completed", "completed"]
    assert docs[0]["correlation_id"] != docs[1]["correlation_id"]  # two runs, each with its own ledger
    assert [d["ledger"]["total"]["calls"] for d in docs] == [3, 3]
    assert closed == [6]  # one client answered both runs and was closed once, after the last
    ends = [r for r in records(log_of(tmp_path)) if r["event"] == "run_end"]
    assert [e["correlation_id"] for e in ends] == [d["correlation_id"] for d in docs]


def test_a_run_that_fails_makes_the_batch_exit_4_and_the_others_still_run(tmp_path: Path) -> None:
    requests = tmp_path / "requests.txt"
    requests.write_text(f"{REQUEST}\n{REQUEST}\n")
    config = scripted_config(tmp_path, ONE_RUN, run={"evaluate": True})  # the second run finds the script spent
    out = invoke("batch", requests, "--config", config, "-q")
    assert_exit(out, 4)
    assert [json.loads(line)["status"] for line in out.stdout.splitlines()] == ["completed", "error"]


def test_a_file_without_requests_is_bad_input(tmp_path: Path) -> None:
    requests = tmp_path / "requests.txt"
    requests.write_text("# only a comment\n")
    out = invoke("batch", requests, "--config", scripted_config(tmp_path, ONE_RUN), "-q")
    assert_exit(out, 2)
    assert "holds no request" in out.stdout
