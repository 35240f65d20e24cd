"""A run that went to its end without doing what it was asked (no step succeeded, or its last step or last tool step
did not complete) never reads as a success: status `failed`, exit 4, the failing step named, in every front door."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

import aeon
from aeon.application.kernel.outcome import failure
from aeon.application.results import RunStatus
from aeon.domain.plan import Plan, PlanStep, StepStatus

from cli_harness import REQUEST, ROOT, SUM_STEP, assert_exit, invoke, plan_json, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env")

DIVIDE = {"step_id": "s1", "description": "Divide by zero", "tool": "calculator", "args": {"expression": "1/0"}}
AEON_MCP = [sys.executable, "-c", "from aeon.entrypoints.cli import main; main()", "mcp"]
MCP_ENV = {"PYTHONPATH": str(ROOT / "src"), "AEON_DURABLE": "false"}
ONE_PASS = {"run": {"evaluate": False}}
WHY = "step s1 (calculator) failed — tool 'calculator' failed: ValueError: division by zero"


def plan_file(tmp_path: Path, *steps: dict[str, Any]) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(plan_json(*steps), encoding="utf-8")
    return path


@pytest.mark.parametrize("durable", [False, True], ids=["in-process", "durable"])
def test_a_plan_whose_only_tool_step_fails_ends_failed_with_exit_4_without_evaluation(
    tmp_path: Path, durable: bool
) -> None:
    config = scripted_config(tmp_path, [])  # run.evaluate: false, no LLM call needed
    flags = [] if durable else ["--no-durable"]
    result = invoke("run", REQUEST, "--plan", plan_file(tmp_path, DIVIDE), "--config", config, "--json", *flags)
    assert_exit(result, 4)
    doc = json.loads(result.stdout)
    assert doc["status"] == "failed"
    assert doc["error"]["code"] == "AEON.STEP.FAILED" and doc["error"]["step_id"] == "s1"
    assert doc["error"]["message"] == f"no step succeeded; {WHY}"


def test_the_human_line_says_failed_and_stderr_names_the_step(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [])
    result = invoke("run", REQUEST, "--plan", plan_file(tmp_path, DIVIDE), "--config", config, "--no-durable")
    assert_exit(result, 4)
    status = next(line for line in result.stdout.splitlines() if "· run " in line)
    assert status.startswith("failed · 1 pass")
    assert f"aeon: no step succeeded; {WHY}" in result.stderr


def test_a_failed_last_tool_step_after_a_good_one_fails_the_run(tmp_path: Path) -> None:
    second = {**DIVIDE, "step_id": "s2"}
    config = scripted_config(tmp_path, [])
    result = invoke("run", REQUEST, "--plan", plan_file(tmp_path, SUM_STEP, second), "--config", config, "--json")
    assert_exit(result, 4)
    doc = json.loads(result.stdout)
    assert doc["status"] == "failed"
    assert doc["error"]["message"].startswith("the last tool step did not complete; step s2 (calculator) failed")
    assert doc["answer"] == "15"  # what did run is still there


def test_a_run_whose_steps_all_succeed_is_still_completed(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [])
    result = invoke("run", REQUEST, "--plan", plan_file(tmp_path, SUM_STEP), "--config", config, "--json")
    assert_exit(result, 0)
    assert json.loads(result.stdout)["status"] == "completed"


def test_the_python_api_gives_the_same_status(tmp_path: Path) -> None:
    scripted_config(tmp_path, [])
    plan = json.loads(plan_json(DIVIDE))
    result = aeon.run(REQUEST, plan=plan, model=f"scripted:{tmp_path / 'script.yaml'}", config=ONE_PASS, log_file=False)
    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.message == f"no step succeeded; {WHY}"


def test_aeon_mcp_gives_the_same_status(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [])
    got: dict[str, Any] = {}

    async def main() -> None:
        params = StdioServerParameters(
            command=AEON_MCP[0], args=[*AEON_MCP[1:], "--config", str(config)], env=MCP_ENV, cwd=tmp_path
        )
        with anyio.fail_after(60), (tmp_path / "stderr.txt").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                answer = await client.call_tool("run", {"request": REQUEST, "plan": json.loads(plan_json(DIVIDE))})
                got.update(answer.structured_content or {})

    anyio.run(main)
    assert got["status"] == "failed" and got["error"]["code"] == "AEON.STEP.FAILED"


def _step(sid: str, status: StepStatus, *, tool: str | None = "calculator", errors: tuple[str, ...] = ()) -> PlanStep:
    agent = None if tool else "llm"
    return PlanStep(step_id=sid, description=sid, tool=tool, agent=agent, status=status, errors=list(errors))


def test_a_step_held_back_by_a_failed_one_is_blamed_on_the_one_that_failed() -> None:
    plan = Plan(
        goal="g",
        steps=[
            _step("s1", StepStatus.COMPLETE),
            _step("s2", StepStatus.FAILED, errors=("boom",)),
            _step("s3", StepStatus.INVALID, errors=("dependencies not complete: s2",)),
        ],
    )
    assert failure(plan) == ("s2", "the last tool step did not complete; step s2 (calculator) failed — boom")


def test_a_failed_final_llm_step_fails_the_run_though_the_tool_steps_ran() -> None:
    plan = Plan(goal="g", steps=[_step("s1", StepStatus.COMPLETE), _step("s2", StepStatus.FAILED, tool=None)])
    assert failure(plan) == ("s2", "the last step did not complete; step s2 failed — failed")
