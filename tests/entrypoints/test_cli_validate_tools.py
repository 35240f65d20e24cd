"""`aeon validate` and `aeon tools`: every plan problem with its step id, tool schemas, user tool modules."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli_harness import SUM_STEP, assert_exit, invoke

USER_MODULE = "fixtures_user_tools"  # tests/support/fixtures_user_tools.py, on pytest's pythonpath

pytestmark = pytest.mark.usefixtures("isolated_env")


def write_json(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def config_with(
    tmp_path: Path, *, modules: Sequence[str] = (), responses: Sequence[str | Mapping[str, Any]] = ()
) -> Path:
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"responses": list(responses)}), encoding="utf-8")
    data = {
        "llm": {"adapter": "scripted", "script": "script.yaml"},
        "tools": {"modules": list(modules)},
        "log": {"path": str(tmp_path / "run.jsonl")},
        "run": {"evaluate": False},
    }
    path = tmp_path / "aeon.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


# -- validate -------------------------------------------------------------------------------------------------------


def test_validate_reports_every_problem_with_its_step_id_and_exits_1(tmp_path: Path) -> None:
    plan = write_json(
        tmp_path / "plan.json",
        {
            "goal": "add",
            "steps": [
                {"step_id": "s1", "description": "Add", "tool": "calculator", "args": {"expr": 5}},
                {"step_id": "s2", "description": "Echo", "tool": "echo", "args": {"text": "hi"}},
                {"step_id": "s2", "description": "Echo again", "tool": "echo", "args": {"text": "hi"}},
                {"step_id": "s3", "description": "Add", "tool": "adder", "args": {"a": 5}},
            ],
        },
    )
    result = invoke("validate", plan)

    assert_exit(result, 1)
    lines = result.stdout.splitlines()
    assert all(line.startswith(f"{plan}: step s") for line in lines), lines
    assert any("step s1:" in line and "calculator" in line and "expression" in line for line in lines), lines
    assert any("step s2:" in line and "duplicate" in line for line in lines), lines
    assert any("step s3:" in line and "'adder' not found in registry" in line for line in lines), lines
    assert not any("step s2:" in line and "duplicate" not in line for line in lines), "s2's tool call is fine"
    assert f"{len(lines)} problems" in result.stderr


def test_validate_accepts_a_valid_yaml_plan_with_exit_0(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump({"goal": "add", "steps": [SUM_STEP]}), encoding="utf-8")
    result = invoke("validate", plan)

    assert_exit(result, 0)
    assert result.stdout.strip() == f"{plan}: valid"


def test_validate_knows_tools_from_the_configured_user_modules(tmp_path: Path) -> None:
    plan = write_json(
        tmp_path / "plan.json",
        {
            "goal": "greet",
            "steps": [{"step_id": "g1", "description": "Greet", "tool": "greet", "args": {"name": "Ada"}}],
        },
    )
    assert_exit(invoke("validate", plan), 1)  # unknown without the module
    assert_exit(invoke("validate", plan, "--config", config_with(tmp_path, modules=[USER_MODULE])), 0)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("missing.json", None),
        ("plan.json", '{"goal": "add", "steps": ['),
        ("plan.yaml", "goal: add\nsteps: [unclosed\n"),
    ],
    ids=["missing", "broken-json", "broken-yaml"],
)
def test_validate_exits_2_with_one_line_naming_an_unreadable_file(tmp_path: Path, name: str, text: str | None) -> None:
    plan = tmp_path / name
    if text is not None:
        plan.write_text(text, encoding="utf-8")
    result = invoke("validate", plan)

    assert_exit(result, 2)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and str(plan) in lines[0], lines


# -- tools ----------------------------------------------------------------------------------------------------------


def test_tools_json_lists_the_builtins_with_schemas_and_an_example() -> None:
    result = invoke("tools", "--json")

    assert_exit(result, 0)
    specs = {s["name"]: s for s in json.loads(result.stdout)}
    assert {"echo", "calculator"} <= set(specs)
    for name in ("echo", "calculator"):
        spec = specs[name]
        assert spec["input_schema"]["type"] == "object"
        assert spec["output_schema"]
        assert spec["example"]
    assert specs["calculator"]["output_schema"] == {"type": "number"}
    assert "expression" in specs["calculator"]["input_schema"]["required"]


def test_tools_lists_the_user_tools_of_a_configured_module(tmp_path: Path) -> None:
    result = invoke("tools", "--json", "--config", config_with(tmp_path, modules=[USER_MODULE]))

    assert_exit(result, 0)
    specs = {s["name"]: s for s in json.loads(result.stdout)}
    assert {"echo", "calculator", "greet", "word_count"} == set(specs)
    assert specs["greet"]["example"] == {"name": "Ada"}
    assert "not_a_tool" not in specs


def test_run_executes_a_given_plan_that_calls_a_user_tool(tmp_path: Path) -> None:
    plan = write_json(
        tmp_path / "plan.json",
        {
            "goal": "greet Ada",
            "steps": [
                {"step_id": "g1", "description": "Greet Ada", "tool": "greet", "args": {"name": "Ada", "shout": True}},
                {"step_id": "w1", "description": "Count", "tool": "word_count", "args": {"text": "one two three"}},
            ],
        },
    )
    config = config_with(tmp_path, modules=[USER_MODULE])
    result = invoke("run", "greet Ada", "--config", config, "--plan", plan, "--json")

    assert_exit(result, 0)
    doc = json.loads(result.stdout)
    assert doc["outputs"]["g1"] == {
        "status": "complete",
        "output": {"text": "HELLO ADA!", "shouted": True},
        "mode": "tool",
        "errors": [],
    }
    assert doc["outputs"]["w1"]["output"] == 3
    assert doc["budget"]["llm_calls"] == 0


@pytest.mark.parametrize("command", [["tools"], ["validate", "plan.json"], ["run", "hello", "--quiet"]])
def test_config_naming_a_missing_tools_module_exits_2_naming_the_module(tmp_path: Path, command: list[str]) -> None:
    write_json(tmp_path / "plan.json", {"goal": "add", "steps": [SUM_STEP]})
    config = config_with(tmp_path, modules=["no_such_aeon_tools_mod"])
    result = invoke(*command, "--config", config)

    assert_exit(result, 2)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert "no_such_aeon_tools_mod" in lines[0]
    assert result.stdout == ""


def test_validate_reports_dependency_cycles_missing_dependencies_and_bad_statuses_by_step(tmp_path: Path) -> None:
    def step(sid: str, *deps: str, **extra: Any) -> dict[str, Any]:
        return {**SUM_STEP, "step_id": sid, "dependencies": list(deps), **extra}

    plan = write_json(
        tmp_path / "plan.json",
        {
            "goal": "add",
            "steps": [
                step("a", "b"),
                step("b", "a"),
                step("c", "ghost"),
                step("d", "e"),
                step("e"),
                step("f", status="done"),
                step("g", status="complete"),
            ],
        },
    )
    result = invoke("validate", plan)

    assert_exit(result, 1)
    lines = result.stdout.splitlines()
    assert any("step a:" in x and "cycle" in x and "a, b" in x for x in lines), lines
    assert any("step c:" in x and "'ghost'" in x and "not in the plan" in x for x in lines), lines
    assert any("step d:" in x and "runs later" in x for x in lines), lines
    assert any("step f:" in x and "'done'" in x and "pending" in x for x in lines), lines
    assert not any("step e:" in x or "step g:" in x for x in lines), lines
    assert len(lines) == 4, lines


def test_run_refuses_a_given_plan_whose_step_status_is_outside_the_state_machine(tmp_path: Path) -> None:
    plan = write_json(tmp_path / "plan.json", {"goal": "add", "steps": [{**SUM_STEP, "status": "done"}]})
    result = invoke("run", "add", "--config", config_with(tmp_path), "--plan", plan, "--quiet")

    assert_exit(result, 2)
    line = result.stderr.strip()
    assert "\n" not in line and "step s1" in line and "'done'" in line
