"""A tool that calls sys.exit(), raises KeyboardInterrupt or another BaseException while it runs fails its step with
one line naming the tool and what it raised; the run goes on and ends as usual (result, run_end, exit code) through
every front door: `aeon run --json` durable and not, aeon.run (in-process and durable), `aeon mcp`, `aeon batch`.
A real Ctrl-C still stops a run stuck in a tool: tests/entrypoints/test_blocking_tools_and_signals.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import yaml
from durable_harness import AEON, SRC, env
from mcp import ClientSession, StdioServerParameters, stdio_client

import aeon

pytestmark = pytest.mark.usefixtures("isolated_env")

TOOLS = '''
import sys

from aeon.adapters.tools import tool


class Leaving(BaseException):
    """A library's own BaseException."""


@tool
def call_exit(x: str) -> str:
    """Exit the process, as a script's main code does."""
    sys.exit(0)


@tool
def interrupt(x: str) -> str:
    """Raise KeyboardInterrupt."""
    raise KeyboardInterrupt


@tool
def leave(x: str) -> str:
    """Raise a BaseException that is not an Exception."""
    raise Leaving("gone")
'''
RAISED = {
    "call_exit": "SystemExit: the tool called sys.exit(0)",
    "interrupt": "KeyboardInterrupt: raised by the tool",
    "leave": "Leaving: raised by the tool: gone",
}
BYE = {"step_id": "s2", "description": "say bye", "tool": "echo", "args": {"text": "bye"}}


def plan(tool: str) -> dict[str, Any]:
    first = {"step_id": "s1", "description": "leave", "tool": tool, "args": {"x": "a"}}
    return {"goal": "leave, then say bye", "steps": [first, BYE]}


def setup(tmp_path: Path, answers: list[str] | None = None) -> Path:
    """The tools module, a scripted model (answering `answers`), one pass, the log in runs.jsonl."""
    (tmp_path / "leaving_tools.py").write_text(TOOLS, encoding="utf-8")
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"responses": answers or []}), encoding="utf-8")
    config = {
        "llm": {"adapter": "scripted", "script": "script.yaml"},
        "tools": {"modules": ["leaving_tools"]},
        "run": {"evaluate": False},
        "log": {"path": str(tmp_path / "runs.jsonl")},
    }
    (tmp_path / "aeon.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return tmp_path / "aeon.yaml"


def aeon_process(tmp_path: Path, *args: str | Path, durable: bool) -> subprocess.CompletedProcess[str]:
    environ = {**env(tmp_path), "AEON_DURABLE": "true" if durable else "false"}
    command = [*AEON, *map(str, args)]
    return subprocess.run(command, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=90)


def check_document(doc: dict[str, Any], tool: str) -> None:
    """The step failed with the one line, the next step ran, and the run completed."""
    steps = {s["step_id"]: s for s in doc["plan"]["steps"]}
    assert steps["s1"]["status"] == "failed"
    assert steps["s1"]["errors"] == [f"tool {tool!r} failed: {RAISED[tool]}"]
    assert doc["outputs"]["s2"]["output"] == "bye"
    assert doc["status"] == "completed"


def check_log(tmp_path: Path, run_id: str, tool: str) -> None:
    mine = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    mine = [r for r in mine if r["correlation_id"] == run_id]
    [call] = [r for r in mine if r["event"] == "tool_call" and r["step_id"] == "s1"]
    assert call["error"] == RAISED[tool]
    assert mine[-1]["event"] == "run_end" and mine[-1]["status"] == "completed"


@pytest.mark.parametrize("durable", [True, False], ids=["durable", "no-durable"])
@pytest.mark.parametrize("tool", sorted(RAISED))
def test_aeon_run_json_fails_the_step_and_ends_the_run_as_usual(tmp_path: Path, tool: str, durable: bool) -> None:
    config = setup(tmp_path)
    (tmp_path / "plan.json").write_text(json.dumps(plan(tool)), encoding="utf-8")
    flag = "--durable" if durable else "--no-durable"
    args = ("run", "leave", "--plan", "plan.json", "--config", config, flag, "--json")
    done = aeon_process(tmp_path, *args, durable=durable)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    doc = json.loads(done.stdout)
    check_document(doc, tool)
    check_log(tmp_path, doc["correlation_id"], tool)


def test_aeon_run_in_process_returns_the_result_with_the_step_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = setup(tmp_path)  # its tools.modules: the tools
    monkeypatch.setattr(sys, "path", list(sys.path))  # the loader adds the config's folder
    try:
        for tool in sorted(RAISED):
            result = aeon.run("leave", plan=plan(tool), config=config, durable=False)
            check_document(msgspec.to_builtins(result), tool)
            check_log(tmp_path, result.correlation_id, tool)
    finally:
        sys.modules.pop("leaving_tools", None)


DURABLE_API = """
import json
import aeon
import msgspec

result = aeon.run("leave", plan=json.load(open("plan.json")), config="aeon.yaml", durable=True)
print(json.dumps(msgspec.to_builtins(result)))
"""


def test_a_durable_aeon_run_returns_the_result_with_the_step_failed(tmp_path: Path) -> None:
    setup(tmp_path)
    (tmp_path / "plan.json").write_text(json.dumps(plan("call_exit")), encoding="utf-8")
    (tmp_path / "main.py").write_text(DURABLE_API, encoding="utf-8")
    environ = {**env(tmp_path), "PYTHONPATH": f"{tmp_path}{os.pathsep}{SRC}"}
    done = subprocess.run(
        [sys.executable, "main.py"], cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=90
    )
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    check_document(doc, "call_exit")
    check_log(tmp_path, doc["correlation_id"], "call_exit")


def test_aeon_mcp_answers_each_call_and_the_server_goes_on(tmp_path: Path) -> None:
    config = setup(tmp_path)
    answers: dict[str, Any] = {}
    environ = {**env(tmp_path), "AEON_DURABLE": "false"}
    params = StdioServerParameters(
        command=AEON[0], args=[*AEON[1:], "mcp", "--config", str(config)], env=environ, cwd=tmp_path
    )

    async def main() -> None:
        with anyio.fail_after(90), (tmp_path / "stderr.txt").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                for tool in sorted(RAISED):
                    answers[tool] = await client.call_tool("run", {"request": "leave", "plan": plan(tool)})
                answers["durable"] = await client.call_tool(
                    "run", {"request": "leave", "plan": plan("interrupt"), "durable": True}
                )
                answers["after"] = await client.call_tool("validate", {"plan": plan("call_exit")})

    anyio.run(main)
    for tool in sorted(RAISED):
        assert not answers[tool].is_error
        check_document(answers[tool].structured_content, tool)
        check_log(tmp_path, answers[tool].structured_content["correlation_id"], tool)
    check_document(answers["durable"].structured_content, "interrupt")
    assert not answers["after"].is_error


def test_aeon_batch_writes_the_result_with_the_step_failed(tmp_path: Path) -> None:
    config = setup(tmp_path, answers=[json.dumps(plan("call_exit"))])
    (tmp_path / "requests.jsonl").write_text(json.dumps({"request": "leave"}) + "\n", encoding="utf-8")
    out = tmp_path / "results.jsonl"
    done = aeon_process(tmp_path, "batch", "requests.jsonl", "--config", config, "--out", out, durable=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    [result] = [json.loads(line) for line in out.read_text().splitlines()]
    check_document(result, "call_exit")
    check_log(tmp_path, result["run_id"], "call_exit")
