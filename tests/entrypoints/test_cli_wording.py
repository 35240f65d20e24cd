"""What a new user reads first: --version, help without oddities, correct plurals, a readable tool table."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import pytest

from cli_harness import DEMO_CONFIG, REQUEST, SUM_STEP, assert_exit, invoke, plan_json, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env")


def test_version_flag_prints_the_installed_version() -> None:
    result = invoke("--version")

    assert_exit(result, 0)
    assert result.stdout.strip() == f"aeon {version('aeon')}"


@pytest.mark.parametrize("command", ["run", "tools", "validate", "inspect"])
def test_help_shows_flags_without_a_bool_placeholder(command: str) -> None:
    result = invoke(command, "--help")

    assert_exit(result, 0)
    assert "<bool>" not in result.stdout
    assert "--debug" in result.stdout or command == "inspect"


def test_a_one_step_plan_reads_in_the_singular(tmp_path: Path) -> None:
    result = invoke("run", REQUEST, "--config", scripted_config(tmp_path, [plan_json(SUM_STEP)]))

    assert_exit(result, 0)
    assert "(1 step)" in result.stderr and "(1 steps)" not in result.stderr


def test_a_run_converging_in_one_pass_reads_in_the_singular(tmp_path: Path) -> None:
    result = invoke("run", REQUEST, "--config", DEMO_CONFIG, "--log-file", tmp_path / "run.jsonl")

    assert_exit(result, 0)
    assert " 1 pass (cap 3) " in result.stdout and "pass(es)" not in result.stdout


def test_a_two_step_plan_reads_in_the_plural(tmp_path: Path) -> None:
    result = invoke(
        "run", REQUEST, "--config", scripted_config(tmp_path, [plan_json(SUM_STEP, {**SUM_STEP, "step_id": "s2"})])
    )

    assert_exit(result, 0)
    assert "(2 steps)" in result.stderr


def test_validate_counts_one_problem_in_the_singular(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(plan_json({**SUM_STEP, "tool": "adder"}), encoding="utf-8")
    result = invoke("validate", plan)

    assert_exit(result, 1)
    assert result.stderr.strip() == "1 problem"


def test_tools_prints_a_readable_table_with_argument_types_and_examples() -> None:
    result = invoke("tools")

    assert_exit(result, 0)
    header, *rows = result.stdout.splitlines()
    assert header.split() == ["NAME", "ARGUMENTS", "RETURNS", "EXAMPLE", "DESCRIPTION"]
    calculator = next(r for r in rows if r.startswith("calculator "))
    assert "expression: string" in calculator
    assert " number " in calculator
    assert '{"expression": "5 + 10"}' in calculator
    assert "Evaluate an arithmetic expression" in calculator
    assert "additionalProperties" not in result.stdout  # no raw schema
    assert [r.split()[0] for r in rows] == ["echo", "calculator"]
    assert json.loads(invoke("tools", "--json").stdout)[0]["name"] == "echo"  # the schemas stay one flag away
