"""MCP servers from the command line: `aeon tools` lists their tools with the server, `aeon validate` checks plans
against them, `aeon run` (plain and durable) calls them end to end, records what they answer, fails a step —
never the run — for what a server does wrong, and leaves no server process behind."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import aeon
from aeon import testing
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.composite import CompositeTools
from aeon.adapters.tools.mcp import McpTools
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.kernel.run import RunSettings

from cli_harness import assert_exit, invoke, log_of, one_line, records, scripted_config
from mcp_harness import TIME_ARGS, http_server, new_tag, processes_with, stdio_args, time_server

pytestmark = pytest.mark.usefixtures("isolated_env")

TIME = {"name": "time", "command": sys.executable, "args": TIME_ARGS, "prefix": "time_"}
TOKYO = {
    "step_id": "s1",
    "description": "Time in Tokyo",
    "tool": "time_get_current_time",
    "args": {"timezone": "Asia/Tokyo"},
}


def step(step_id: str, tool: str, **args: Any) -> dict[str, Any]:
    return {"step_id": step_id, "description": f"call {tool}", "tool": tool, "args": args}


def plan_file(tmp_path: Path, *steps: dict[str, Any]) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"goal": "use the MCP tools", "steps": list(steps)}), encoding="utf-8")
    return path


def test_aeon_tools_lists_mcp_tools_with_their_server(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [], tools={"mcp": [TIME]})

    text = invoke("tools", "--config", config)
    as_json = invoke("tools", "--config", config, "--json")

    assert_exit(text, 0)
    header, *rows = text.stdout.splitlines()
    assert header.split()[:3] == ["NAME", "SERVER", "ARGUMENTS"]
    assert rows[0].split()[:2] == ["echo", "-"]  # a Python tool
    assert [r.split()[:3] for r in rows[2:]] == [
        ["time_get_current_time", "time", "timezone:"],
        ["time_convert_time", "time", "source_timezone:"],
    ]
    assert_exit(as_json, 0)
    served = {t["name"]: t for t in json.loads(as_json.stdout) if t["server"] == "time"}
    assert set(served) == {"time_get_current_time", "time_convert_time"}
    assert served["time_get_current_time"]["input_schema"]["required"] == ["timezone"]
    assert served["time_get_current_time"]["idempotent"] is True


def test_aeon_validate_checks_plans_against_mcp_tools(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [], tools={"mcp": [TIME]})
    good = plan_file(tmp_path, TOKYO)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"goal": "g", "steps": [step("s1", "time_get_current_time", tz="Asia/Tokyo")]}))

    assert_exit(invoke("validate", good, "--config", config), 0)
    out = invoke("validate", bad, "--config", config)

    assert_exit(out, 1)
    assert "step s1: args for tool 'time_get_current_time' invalid" in out.stdout
    assert "'timezone' is a required property" in out.stdout


def test_a_run_calls_mcp_tools_end_to_end_and_records_what_they_answer(tmp_path: Path) -> None:
    tag = new_tag()
    used = ["add", "picture", "refuse", "slow", "crash"]  # read-only: none needs approval, the run stays in-process
    server = {"name": "test", "command": sys.executable, "args": stdio_args(tag), "timeout": 0.5, "include": used}
    config = scripted_config(tmp_path, [], tools={"mcp": [server]})
    plan = plan_file(
        tmp_path,
        step("s1", "add", a=2, b=3),
        step("s2", "picture"),
        step("s3", "refuse", reason="not today"),
        step("s4", "slow", seconds=3),
        step("s5", "crash"),
        step("s6", "add", a=1, b=1),
    )

    out = invoke("run", "use the MCP tools", "--config", config, "--plan", plan, "--json")

    assert_exit(out, 4)  # its last tool step failed: the run did not do what it was asked
    doc = json.loads(out.stdout)
    assert doc["status"] == "failed" and doc["error"]["step_id"] == "s6"
    steps = {s["step_id"]: s for s in doc["plan"]["steps"]}
    assert steps["s1"]["status"] == "complete" and steps["s1"]["step_output"] == {"result": 5}
    image, caption = steps["s2"]["step_output"]
    assert (image["type"], image["mime_type"], image["bytes"]) == ("image", "image/png", 70)
    assert caption == {"type": "text", "text": "a tiny picture"}
    failed = {k: s["errors"][0] for k, s in steps.items() if s["status"] == "failed"}
    assert failed == {
        "s3": "tool 'refuse' failed: MCP server 'test' reported an error: Error executing tool refuse: refused: "
        "not today",
        "s4": "tool 'slow' failed: TimeoutError: MCP server 'test' did not answer within 0.5 s (its timeout); "
        "call cancelled",
        "s5": "tool 'crash' failed: MCP server 'test' closed the connection (the server may have exited); its "
        "stderr ended: test server: crashing on purpose",
        "s6": "tool 'add' failed: MCP server 'test' closed the connection (the server may have exited); its "
        "stderr ended: test server: crashing on purpose",
    }
    calls = [
        (r["tool"], r["output"], r["error"] is None) for r in records(log_of(tmp_path)) if r["event"] == "tool_call"
    ]
    assert calls[0] == ("add", {"result": 5}, True) and calls[1][1][0]["sha256"] == image["sha256"]
    assert processes_with(tag) == []
    assert "durable" not in out.stderr


def test_the_planner_sees_mcp_tools_like_any_other() -> None:
    registry = ToolRegistry()
    register_builtins(registry)
    servers = McpTools([time_server(prefix="time_")])
    servers.start()
    try:
        llm = testing.answers(json.dumps({"goal": "time in Tokyo", "steps": [TOKYO]}))
        orchestrator = testing.orchestrator(
            llm, tools=CompositeTools(registry, servers), run=RunSettings(evaluate=False)
        )
        result = asyncio.run(orchestrator.run("what time is it in Tokyo?"))
    finally:
        servers.close()

    shown = "\n".join(m.content for m in llm.calls[0].messages)  # the tools are in the system message
    assert "time_get_current_time" in shown and "IANA timezone name" in shown
    assert result.status == "completed" and result.outputs["s1"].output["timezone"] == "Asia/Tokyo"


def test_a_server_that_fails_to_start_is_exit_2_naming_it_before_any_llm_call(tmp_path: Path) -> None:
    broken = {
        "name": "broken",
        "command": sys.executable,
        "args": ["-c", "import sys; sys.exit('no config, no server')"],
    }
    config = scripted_config(tmp_path, [], tools={"mcp": [broken]})

    out = invoke("run", "anything", "--config", config, "--json")

    assert_exit(out, 2)
    error = json.loads(out.stdout)["error"]
    assert error["code"] == "AEON.CONFIG"
    assert error["message"] == (
        "MCP server 'broken' (stdio) closed the connection (the server may have exited); "
        "its stderr ended: no config, no server"
    )
    assert not log_of(tmp_path).exists()  # stopped before the log was opened: nothing spent, nothing recorded
    out = invoke("tools", "--config", config)
    assert_exit(out, 2)
    assert one_line(out.stderr).startswith("aeon: MCP server 'broken' (stdio) closed the connection")


def test_a_durable_run_sees_the_same_mcp_tools_and_starts_each_server_once(tmp_path: Path) -> None:
    tag, journal = new_tag(), tmp_path / "journal.txt"
    server = {"name": "test", "command": sys.executable, "args": [*stdio_args(tag), "--journal", str(journal)]}
    config = scripted_config(tmp_path, [], tools={"mcp": [server]})
    plan = plan_file(tmp_path, step("s1", "add", a=40, b=2))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AEON_")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(aeon.__file__).parents[1]), str(Path(__file__).parents[1] / "support")]
    )
    cmd = [sys.executable, "-c", "from aeon.entrypoints.cli import main; main()"]

    done = subprocess.run(
        [*cmd, "run", "add", "--config", str(config), "--plan", str(plan), "--durable", "--json", "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "completed" and result["plan"]["steps"][0]["step_output"] == {"result": 42}
    assert len(journal.read_text().splitlines()) == 1  # the plan's check and the durable run: one server
    assert processes_with(tag) == []


def test_an_env_marker_in_args_reaches_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEON_TEST_ZONE", "Asia/Tokyo")
    server = {**TIME, "args": ["-m", "mcp_server_time", "--local-timezone", "${AEON_TEST_ZONE}"]}
    config = scripted_config(tmp_path, [], tools={"mcp": [server]})

    out = invoke("tools", "--config", config, "--json")

    assert_exit(out, 0)
    (now,) = [t for t in json.loads(out.stdout) if t["name"] == "time_get_current_time"]
    # the server names its local timezone (from --local-timezone) in the argument's description
    assert "Use 'Asia/Tokyo' as local timezone" in now["input_schema"]["properties"]["timezone"]["description"]
    assert yaml.safe_load(config.read_text())["tools"]["mcp"][0]["args"][-1] == "${AEON_TEST_ZONE}"


def test_a_header_value_from_the_environment_reaches_the_server_and_no_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "HEADER-VALUE-FROM-THE-ENVIRONMENT-42"  # upper case: what `shout` answers for its lower-case form
    monkeypatch.setenv("MCP_TEST_HEADER_VALUE", secret)  # a name no rule takes for a secret's: the marker makes it one
    with http_server(secret, header="X-Test") as url:
        web = {"name": "web", "url": url, "headers": {"X-Test": "${MCP_TEST_HEADER_VALUE}"}, "include": ["shout"]}
        config = scripted_config(tmp_path, [], tools={"mcp": [web]})
        plan = plan_file(tmp_path, step("s1", "shout", text=secret.lower()))
        out = invoke("run", "shout it", "--config", config, "--plan", plan, "--json")

    assert_exit(out, 0)  # the server let us in: the header reached it
    (s1,) = json.loads(out.stdout)["plan"]["steps"]
    assert s1["status"] == "complete" and s1["step_output"] == {"result": "[REDACTED]"}
    assert secret not in out.stdout + out.stderr + log_of(tmp_path).read_text()


def test_without_a_server_configured_the_mcp_sdk_is_never_imported(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom aeon.entrypoints.cli import main\n"
        "for argv in (['--version'], ['--help'], ['tools'], ['run', '--help']):\n"
        "    sys.argv = ['aeon', *argv]\n"
        "    try:\n        main()\n    except SystemExit as e:\n        assert e.code == 0, (argv, e.code)\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'httpx2')]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "aeon " in done.stdout and "MCP" not in done.stderr
