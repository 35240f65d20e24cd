"""`aeon validate` and `$from` references: a reference to a step not in the plan, to a step that does not run before
the one using it, or to a path its tool's output cannot have is reported with the step's id; a good one is valid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_harness import assert_exit, invoke

pytestmark = pytest.mark.usefixtures("isolated_env")

ADD = {"step_id": "s1", "description": "Add", "tool": "calculator", "args": {"expression": "5 + 10"}}


def _plan(tmp_path: Path, *steps: dict[str, object]) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"goal": "add, then say it", "steps": list(steps)}), encoding="utf-8")
    return path


def _echo(step_id: str, ref: dict[str, str]) -> dict[str, object]:
    return {"step_id": step_id, "description": "Say it", "tool": "echo", "args": {"text": ref}}


def test_validate_reports_references_to_unknown_and_later_steps_and_impossible_paths(tmp_path: Path) -> None:
    plan = _plan(
        tmp_path,
        _echo("s0", {"$from": "s1"}),  # s1 runs later
        ADD,
        _echo("s2", {"$from": "s9"}),  # no such step
        _echo("s3", {"$from": "s2", "path": "words.0"}),  # echo returns a string: it has no field "words"
    )
    result = invoke("validate", plan)
    assert_exit(result, 1)
    lines = result.stdout.splitlines()
    assert any("step s0:" in line and "'s1'" in line and "does not run before it" in line for line in lines), lines
    assert any("step s2:" in line and "'s9'" in line and "not in the plan" in line for line in lines), lines
    assert any("step s3:" in line and "'words.0'" in line and "'echo'" in line for line in lines), lines


def test_validate_accepts_a_reference_to_an_earlier_step(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ADD, _echo("s2", {"$from": "s1"}))
    result = invoke("validate", plan)
    assert_exit(result, 0)


def test_validate_warns_when_a_consequential_argument_takes_an_untrusted_output(tmp_path: Path) -> None:
    """The plan's data flow, checked before anything runs: the warning names the step, the argument and its source;
    the plan stays valid (exit 0)."""
    config = tmp_path / "aeon.yaml"
    policy = {"tools": {"calculator": {"trusted_output": False}, "echo": {"effect": "write"}}}
    config.write_text(json.dumps({"policy": policy}), encoding="utf-8")
    plan = _plan(tmp_path, ADD, _echo("s2", {"$from": "s1"}))
    result = invoke("validate", plan, "--config", config)
    assert_exit(result, 0)
    (line,) = result.stderr.splitlines()[:1]
    assert line.startswith("aeon: warning:") and "step s2:" in line and "'text'" in line, line
    assert "'s1'" in line and "tool:calculator" in line and "needs approval" in line, line
    trusted = invoke("validate", _plan(tmp_path, ADD, _echo("s2", {"$from": "s1"})))
    assert_exit(trusted, 0)
    assert "warning" not in trusted.stderr
