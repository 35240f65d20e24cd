"""Plan size limits that fit users, and errors printed once: a JSON document under --json, one line otherwise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli_harness import REQUEST, SUM_STEP, assert_exit, invoke, log_of, one_line, plan_json, records, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env")


def steps(n: int) -> list[dict[str, Any]]:
    return [{**SUM_STEP, "step_id": f"s{i}", "description": f"Add, take {i}"} for i in range(1, n + 1)]


def write_plan(tmp_path: Path, n: int) -> Path:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"goal": "add many times", "steps": steps(n)}), encoding="utf-8")
    return plan


def json_error(stdout: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(stdout)  # the whole of stdout is one document
    assert doc["status"] == "error"
    assert set(doc["error"]) >= {"code", "message"}
    return doc


# -- plan size ------------------------------------------------------------------------------------------------------


def test_a_hand_written_plan_of_eleven_steps_runs(tmp_path: Path) -> None:
    result = invoke(
        "run", "add", "--config", scripted_config(tmp_path, []), "--plan", write_plan(tmp_path, 11), "--json"
    )

    assert_exit(result, 0)
    doc = json.loads(result.stdout)
    assert len(doc["outputs"]) == 11
    assert all(o["output"] == 15 for o in doc["outputs"].values())


def test_max_plan_steps_can_be_set_above_ten_for_model_plans(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [plan_json(*steps(12))], run={"max_plan_steps": 12})
    result = invoke("run", REQUEST, "--config", config, "--json")

    assert_exit(result, 0)
    assert len(json.loads(result.stdout)["outputs"]) == 12


def test_a_model_plan_of_nineteen_steps_runs_under_the_default_cap(tmp_path: Path) -> None:
    result = invoke("run", REQUEST, "--config", scripted_config(tmp_path, [plan_json(*steps(19))]), "--json")

    assert_exit(result, 0)
    assert len(json.loads(result.stdout)["outputs"]) == 19


def test_a_model_plan_that_stays_over_the_cap_names_the_setting_to_raise(tmp_path: Path) -> None:
    too_long = plan_json(*steps(21))
    config = scripted_config(tmp_path, [too_long] * 3)  # the plan, then both repairs, all over the default 20
    result = invoke("run", REQUEST, "--config", config, "--json")

    assert_exit(result, 4)
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "AEON.PHASE_TRANSITION.INVALID_PLAN_STRUCTURE"
    assert "has 21 items, more than the 20 allowed" in error["message"]
    assert "run.max_plan_steps is 20: raise it in the config's run section" in error["message"]


def test_a_refused_plan_is_one_short_line_that_does_not_dump_its_steps(tmp_path: Path) -> None:
    result = invoke("run", "add", "--config", scripted_config(tmp_path, []), "--plan", write_plan(tmp_path, 201))

    assert_exit(result, 2)
    line = one_line(result.stderr)
    assert "201" in line and "Add, take" not in line and len(line) < 300
    assert result.stdout == ""


def test_a_model_plan_over_the_cap_is_repaired_with_a_short_problem_not_the_step_list(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [plan_json(*steps(3)), plan_json(*steps(2))], run={"max_plan_steps": 2})
    result = invoke("run", REQUEST, "--config", config, "--json")

    assert_exit(result, 0)
    assert json.loads(result.stdout)["counts"]["llm_repairs"] == 1
    (planning,) = [r for r in records(log_of(tmp_path)) if r["event"] == "cycle" and r["step_number"] == 0]
    (error,) = planning["errors"]
    assert "3" in error and "2" in error and "Add, take" not in error


# -- --json: every error is one JSON document on stdout -------------------------------------------------------------


def test_a_config_error_under_json_is_a_json_document_with_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(yaml.safe_dump({"run": {"ttl": "x"}}), encoding="utf-8")
    result = invoke("run", REQUEST, "--config", config, "--json")

    assert_exit(result, 2)
    doc = json_error(result.stdout)
    assert doc["error"]["code"] == "AEON.CONFIG" and "run.ttl" in doc["error"]["message"]
    assert result.stderr == ""


@pytest.mark.parametrize(
    "args",
    [["run", "  ", "--json"], ["run", REQUEST, "--plan", "missing.json", "--json"], ["tools", "--json"]],
    ids=["empty-request", "missing-plan", "tools-bad-module"],
)
def test_input_errors_under_json_are_json_documents_with_exit_2(tmp_path: Path, args: list[str]) -> None:
    config = scripted_config(tmp_path, [], tools={"modules": ["no_such_tools_module"]} if "tools" in args else {})
    result = invoke(*args, "--config", config)

    assert_exit(result, 2)
    json_error(result.stdout)
    assert result.stderr == ""


def test_a_usage_error_under_json_is_a_json_document_with_exit_2(tmp_path: Path) -> None:
    result = invoke("run", REQUEST, "--ttl", "-1", "--json")

    assert_exit(result, 2)
    assert "--ttl" in json_error(result.stdout)["error"]["message"]


def test_an_internal_error_under_json_is_a_json_document_with_exit_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aeon.application.kernel.orchestrator import Orchestrator

    async def broken(self: Any, request: str, **given: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(Orchestrator, "run", broken)
    result = invoke("run", REQUEST, "--config", scripted_config(tmp_path, []), "--json")

    assert_exit(result, 4)
    assert "boom" in json_error(result.stdout)["error"]["message"]


# -- errors are printed once ----------------------------------------------------------------------------------------


def test_a_run_error_is_printed_once_on_stderr_not_also_on_stdout(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [{"error": "rejected"}])
    result = invoke("run", REQUEST, "--config", config)

    assert_exit(result, 4)
    assert "rejected" not in result.stdout
    assert sum("rejected: HTTP 400" in line for line in result.stderr.splitlines()) == 1
