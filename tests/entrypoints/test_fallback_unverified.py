"""A tool step that falls back to LLM text never passes for a tool result: it says so, the result lists the tool
call that did not happen, and convergence treats the text as unverified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_harness import REQUEST, assert_exit, invoke, plan_json, scripted_config
from multipass import profile, verdict

pytestmark = pytest.mark.usefixtures("isolated_env")

BAD_ARGS = {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expr": "5 + 10"}}
STILL_BAD = json.dumps({**BAD_ARGS, "args": {"sum": "5 + 10"}})  # the step repair fails twice
FALLBACK_TEXT = json.dumps({"answer": "5 plus 10 is 15.", "clarity_state": "CLEAR", "handoff_to_next": "15"})


def plan_file(tmp_path: Path) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(plan_json(BAD_ARGS), encoding="utf-8")
    return path


def test_a_fallback_tool_step_is_marked_and_listed_as_a_tool_call_that_did_not_happen(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [STILL_BAD, STILL_BAD, FALLBACK_TEXT])
    result = invoke("run", REQUEST, "--plan", plan_file(tmp_path), "--config", config, "--json")
    assert_exit(result, 5)  # a script's `aeon run … && next-step` stops here: the tool never ran
    doc = json.loads(result.stdout)
    assert doc["status"] == "unverified"
    s1 = doc["plan"]["steps"][0]
    assert s1["mode"] == "fallback" and s1["step_output"] == "5 plus 10 is 15."
    assert any("tool 'calculator' was not called" in note for note in s1["notes"])  # … but says what it is
    [missing] = doc["tool_calls_not_made"]
    assert missing["step_id"] == "s1" and missing["tool"] == "calculator" and "expression" in missing["reason"]
    assert any("tool 'calculator' was not called" in w for w in doc["warnings"])


def test_convergence_does_not_accept_fallback_text_for_a_tool_result(tmp_path: Path) -> None:
    script = [profile(1, 1.0), STILL_BAD, STILL_BAD, FALLBACK_TEXT, json.dumps({"issues": []}), verdict(True)]
    config = scripted_config(tmp_path, script, run={"evaluate": True, "ttl": 1})
    result = invoke("run", REQUEST, "--plan", plan_file(tmp_path), "--config", config, "--json")
    assert_exit(result, 3)  # the model judged it complete; the facts say a tool never ran
    doc = json.loads(result.stdout)
    assert doc["converged"] is False
    assert "unverified_step:s1" in doc["convergence"]["reason_codes"]
    assert any("tool 'calculator' never ran" in i for i in doc["convergence"]["detected_issues"])


def test_the_human_status_line_names_the_tool_that_never_ran(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [STILL_BAD, STILL_BAD, FALLBACK_TEXT])
    result = invoke("run", REQUEST, "--plan", plan_file(tmp_path), "--config", config)
    assert_exit(result, 5)
    assert "unverified: the tool never ran for s1 (calculator); LLM text stands in its place" in result.stdout


def test_a_run_whose_tool_steps_all_ran_is_completed_with_exit_0(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(plan_json({**BAD_ARGS, "args": {"expression": "5 + 10"}}), encoding="utf-8")
    result = invoke("run", REQUEST, "--plan", path, "--config", scripted_config(tmp_path, []), "--json")
    assert_exit(result, 0)
    assert json.loads(result.stdout)["status"] == "completed"
