"""`aeon mcp` as an MCP client sees it: a real `aeon mcp --config …` process, driven by the official SDK's stdio
client (which fails on anything but protocol on stdout, and checks every structured result against its tool's
output schema) or, where the test needs the raw wire, by JSON-RPC lines over pipes. The model is scripted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from cli_harness import REQUEST, SUM_STEP, assert_exit, invoke, log_of, plan_json, records, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env")

ROOT = Path(__file__).resolve().parents[2]
AEON = [sys.executable, "-c", "from aeon.entrypoints.cli import main; main()"]
SAY_STEP = {"step_id": "s2", "description": "State the result of s1", "agent": "llm"}
PLAN = {"goal": REQUEST, "steps": [SUM_STEP, SAY_STEP]}
ANSWERS = [plan_json(SUM_STEP, SAY_STEP), "The sum of 5 and 10 is 15."]
TOOLS = '''
import asyncio
import os
import sys

from aeon.adapters.tools import tool

print("noise from the import")


@tool
def noisy(text: str) -> str:
    """Print to stdout in three ways, then return the text."""
    print("noise from print")
    sys.stdout.write("noise from sys.stdout\\n")
    sys.stdout.flush()
    os.write(1, b"noise from file descriptor 1\\n")
    return text


@tool
async def wait(seconds: float) -> str:
    """Wait for `seconds`."""
    await asyncio.sleep(seconds)
    return "woke up"
'''
WAITING_PLAN = {
    "goal": "wait",
    "steps": [
        {"step_id": "s1", "description": "say hi", "tool": "echo", "args": {"text": "hi"}},
        {"step_id": "s2", "description": "wait long", "tool": "wait", "args": {"seconds": 60}},
    ],
}


def env(tmp_path: Path) -> dict[str, str]:
    """The checkout's Aeon and the test's tools module on the path; nothing else of the developer's environment.
    Runs are not durable unless a call asks (`durable: true`), or needs it for approval."""
    return {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(tmp_path)]), "AEON_DURABLE": "false"}


def config_with_tools(tmp_path: Path, responses: list[str], **sections: Any) -> Path:
    (tmp_path / "mcp_test_tools.py").write_text(TOOLS, encoding="utf-8")
    return scripted_config(tmp_path, responses, tools={"modules": ["mcp_test_tools"]}, **sections)


@asynccontextmanager
async def connected(tmp_path: Path, config: Path) -> AsyncIterator[ClientSession]:
    """An initialized client session with `aeon mcp --config CONFIG`, its stderr in tmp_path/stderr.txt."""
    params = StdioServerParameters(
        command=AEON[0], args=[*AEON[1:], "mcp", "--config", str(config)], env=env(tmp_path), cwd=tmp_path
    )
    with (tmp_path / "stderr.txt").open("w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            yield client


def talk(tmp_path: Path, config: Path, script: Callable[[ClientSession], Awaitable[None]]) -> None:
    """Run `script` against a fresh server, bounded in time."""

    async def main() -> None:
        with anyio.fail_after(60):
            async with connected(tmp_path, config) as client:
                await script(client)

    anyio.run(main)


def run_ended(log: Path) -> None:
    """Wait (at most 10 s) until the log holds a run_end record."""
    deadline = time.monotonic() + 10
    while not [r for r in records(log) if r["event"] == "run_end"]:
        assert time.monotonic() < deadline, "the run never ended on the record"
        time.sleep(0.05)


def text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


# -- the tools, as the client lists them ----------------------------------------------------------------------------


def test_the_server_lists_run_validate_runs_and_resume_with_schemas_a_client_model_can_follow(tmp_path: Path) -> None:
    async def script(client: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

        assert list(tools) == ["run", "validate", "runs", "resume"]
        run, validate, runs, resume = tools.values()
        assert run.input_schema["required"] == ["request"]
        assert set(run.input_schema["properties"]) == {"request", "plan", "ttl", "max_llm_calls", "durable"}
        assert run.input_schema["additionalProperties"] is False
        # a plan is spelled out, naming the tools it may call; the description lists them with their arguments
        steps = run.input_schema["properties"]["plan"]["properties"]["steps"]
        assert {"calculator", "echo", "noisy", "wait"} <= set(steps["items"]["properties"]["tool"]["enum"])
        assert "calculator" in (run.description or "") and "expression: string" in (run.description or "")
        assert validate.input_schema["required"] == ["plan"]
        assert runs.input_schema["properties"]["status"]["anyOf"][0]["enum"][0] == "completed"
        assert resume.input_schema["required"] == ["run_id"]
        # structured results: the run result (as aeon run --json), the verdict, the runs
        assert run.output_schema is not None and resume.output_schema == run.output_schema
        assert {"status", "outputs", "answer", "budget", "correlation_id"} <= set(run.output_schema["properties"])
        assert "history" not in run.output_schema["properties"]
        assert validate.output_schema is not None and validate.output_schema["required"] == ["valid", "problems"]
        assert runs.output_schema is not None and runs.output_schema["required"] == ["runs"]
        assert validate.annotations is not None and validate.annotations.read_only_hint is True
        assert runs.annotations is not None and runs.annotations.read_only_hint is True

    talk(tmp_path, config_with_tools(tmp_path, []), script)


# -- validate ---------------------------------------------------------------------------------------------------------


def test_validate_gives_aeon_validates_verdict_on_a_good_and_a_bad_plan(tmp_path: Path) -> None:
    config = config_with_tools(tmp_path, [])
    bad = {
        "goal": "g",
        "steps": [
            {"step_id": "s1", "description": "add", "tool": "calculator", "args": {"expression": 5}},
            {"step_id": "s2", "description": "nothing", "tool": "teleport", "args": {}},
        ],
    }
    (tmp_path / "bad.json").write_text(json.dumps(bad), encoding="utf-8")
    cli = invoke("validate", tmp_path / "bad.json", "--config", config)
    assert_exit(cli, 1)
    cli_problems = [line.split(": ", 1)[1] for line in cli.stdout.splitlines()]
    answers: dict[str, CallToolResult] = {}

    async def script(client: ClientSession) -> None:
        answers["good"] = await client.call_tool("validate", {"plan": PLAN})
        answers["bad"] = await client.call_tool("validate", {"plan": bad})

    talk(tmp_path, config, script)

    good, wrong = answers["good"], answers["bad"]
    assert not good.is_error and good.structured_content == {"valid": True, "problems": []}
    assert text(good) == "valid"
    assert not wrong.is_error and wrong.structured_content is not None
    assert wrong.structured_content == {"valid": False, "problems": cli_problems}
    assert any("s1" in p and "expression" in p for p in cli_problems)
    assert any("s2" in p and "teleport" in p for p in cli_problems)


# -- run --------------------------------------------------------------------------------------------------------------


def test_run_answers_with_the_structured_result_of_aeon_run_json_and_a_short_summary(tmp_path: Path) -> None:
    config = config_with_tools(tmp_path, ANSWERS)
    cli = invoke("run", REQUEST, "--config", config, "--json", "--quiet")
    assert_exit(cli, 0)
    answers: dict[str, CallToolResult] = {}
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async def script(client: ClientSession) -> None:
        answers["run"] = await client.call_tool("run", {"request": REQUEST}, progress_callback=on_progress)

    talk(tmp_path, config, script)

    result = answers["run"]
    assert not result.is_error
    doc = result.structured_content
    assert doc is not None and doc["status"] == "completed"
    assert doc["outputs"]["s1"]["output"] == 15
    assert doc["outputs"]["s2"]["output"] == "The sum of 5 and 10 is 15."
    assert set(doc) == set(json.loads(cli.stdout))  # the same fields as aeon run --json
    summary = text(result)
    assert "completed · 1 pass" in summary and "output: 15" in summary
    assert any("s1 complete (tool): 15" in line for line in progress)  # the client asked for progress
    ends = [r for r in records(log_of(tmp_path)) if r["event"] == "run_end"]
    assert [r["correlation_id"] for r in ends][-1] == doc["correlation_id"]


def test_a_run_that_exhausts_its_cap_is_a_result_with_status_ttl_expired_and_a_call_cannot_raise_the_cap(
    tmp_path: Path,
) -> None:
    config = config_with_tools(tmp_path, ANSWERS, run={"max_llm_calls": 1})
    answers: dict[str, CallToolResult] = {}

    async def script(client: ClientSession) -> None:
        answers["capped"] = await client.call_tool("run", {"request": REQUEST, "max_llm_calls": 50})
        answers["ttl 0"] = await client.call_tool("run", {"request": REQUEST, "ttl": 0})

    talk(tmp_path, config, script)

    capped = answers["capped"]
    assert not capped.is_error and capped.structured_content is not None
    assert capped.structured_content["status"] == "ttl_expired"
    assert capped.structured_content["budget"]["llm_calls"] == 1
    assert capped.structured_content["ttl_expiration"]["expiration_type"] == "mid_phase"
    assert any("caps it at 1" in w for w in capped.structured_content["warnings"])
    assert "the LLM-call cap was reached" in text(capped)
    zero = answers["ttl 0"]
    assert not zero.is_error and zero.structured_content is not None
    assert zero.structured_content["status"] == "ttl_expired"
    assert zero.structured_content["budget"]["llm_calls"] == 0


def test_bad_arguments_are_an_error_result_naming_what_is_wrong_and_the_server_goes_on(tmp_path: Path) -> None:
    config = config_with_tools(tmp_path, ANSWERS)
    deep: dict[str, Any] = {}
    for _ in range(150):
        deep = {"a": deep}
    calls = {
        "no request": ("run", {}, "request: Field required"),
        "empty request": ("run", {"request": "  "}, "the request is empty"),
        "negative ttl": ("run", {"request": REQUEST, "ttl": -1}, "ttl: Input should be greater than or equal to 0"),
        "unknown argument": ("run", {"request": REQUEST, "model": "gpt"}, "model: Extra inputs are not permitted"),
        "plan not an object": ("run", {"request": REQUEST, "plan": "s1 then s2"}, "plan: Input should be"),
        "unregistered tool": (
            "run",
            {"request": REQUEST, "plan": {"goal": "g", "steps": [{"step_id": "s1", "description": "d", "tool": "x"}]}},
            "the plan argument",
        ),
        "plan too deep": ("validate", {"plan": {"goal": "g", "steps": [], "x": deep}}, "nested deeper than 100"),
        "unknown run": ("resume", {"run_id": "no-such-run"}, "unknown run id 'no-such-run'"),
        "bad status": ("runs", {"status": "done"}, "status: Input should be"),
        "unknown tool": ("deploy", {}, "unknown tool 'deploy'"),
    }
    answers: dict[str, CallToolResult] = {}

    async def script(client: ClientSession) -> None:
        for name, (tool, arguments, _) in calls.items():
            answers[name] = await client.call_tool(tool, arguments)
        answers["after"] = await client.call_tool("run", {"request": REQUEST})

    talk(tmp_path, config, script)

    for name, (_, _, expected) in calls.items():
        result = answers[name]
        assert result.is_error, name
        assert len(text(result).splitlines()) == 1 and expected in text(result), (name, text(result))
    assert answers["after"].structured_content is not None
    assert answers["after"].structured_content["status"] == "completed"
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


# -- the wire: nothing but protocol on stdout, and the end of the connection --------------------------------------


class Wire:
    """`aeon mcp` over pipes, spoken to in raw JSON-RPC lines: every line it writes on stdout is kept."""

    def __init__(self, tmp_path: Path, config: Path) -> None:
        self.stderr = tmp_path / "stderr.txt"
        with self.stderr.open("w") as errlog:  # the child keeps its own descriptor
            self.process = subprocess.Popen(
                [*AEON, "mcp", "--config", str(config)],
                cwd=tmp_path,
                env={**os.environ, **env(tmp_path)},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errlog,
                text=True,
            )
        self.lines: list[str] = []
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "wire", "version": "0"}}
        self.send({"id": 1, "method": "initialize", "params": hello})
        self.answer(1)
        self.send({"method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.process.stdin.flush()

    def answer(self, request_id: int) -> dict[str, Any]:
        assert self.process.stdout is not None
        while line := self.process.stdout.readline():
            self.lines.append(line)
            message = json.loads(line)  # a line that is not JSON-RPC fails here
            assert message["jsonrpc"] == "2.0", line
            if message.get("id") == request_id:
                return dict(message)
        raise AssertionError(f"stdout ended before the answer to request {request_id}")

    def wait_for_stderr(self, marker: str) -> None:
        deadline = time.monotonic() + 30
        while marker not in self.stderr.read_text(encoding="utf-8"):
            assert time.monotonic() < deadline, f"{marker!r} never reached stderr"
            time.sleep(0.05)

    def close_stdin(self) -> int:
        """Close stdin as a client that goes away does; the exit code."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.exited()

    def exited(self) -> int:
        """The exit code, waiting at most 10 s; the rest of stdout is kept."""
        assert self.process.stdin is not None and self.process.stdout is not None
        code = self.process.wait(timeout=10)
        self.lines.extend(self.process.stdout.readlines())
        self.process.stdout.close()
        self.process.stdin.close()
        return code


def test_stdout_carries_nothing_but_protocol_though_a_tool_prints_and_stdin_closed_ends_the_server(
    tmp_path: Path,
) -> None:
    plan = {"goal": "g", "steps": [{"step_id": "s1", "description": "print", "tool": "noisy", "args": {"text": "hi"}}]}
    wire = Wire(tmp_path, config_with_tools(tmp_path, []))
    arguments = {"request": "print", "plan": plan}
    wire.send({"id": 2, "method": "tools/call", "params": {"name": "run", "arguments": arguments}})
    answer = wire.answer(2)

    assert wire.close_stdin() == 0
    assert answer["result"]["structuredContent"]["outputs"]["s1"]["output"] == "hi"
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in wire.lines)
    noise = wire.stderr.read_text(encoding="utf-8")
    assert all(f"noise from {where}" in noise for where in ("the import", "print", "sys.stdout", "file descriptor 1"))


def test_a_client_that_goes_away_ends_the_run_in_flight_as_interrupted_on_the_record(tmp_path: Path) -> None:
    wire = Wire(tmp_path, config_with_tools(tmp_path, []))
    arguments = {"request": "wait", "plan": WAITING_PLAN}
    wire.send({"id": 2, "method": "tools/call", "params": {"name": "run", "arguments": arguments}})
    wire.wait_for_stderr("s2: wait long")  # the tool is waiting its minute

    started = time.monotonic()
    assert wire.close_stdin() == 0
    assert time.monotonic() - started < 8
    end = records(log_of(tmp_path))[-1]
    assert (end["event"], end["status"]) == ("run_end", "interrupted")


def test_sigterm_ends_the_run_in_flight_as_interrupted_on_the_record_and_exits_143(tmp_path: Path) -> None:
    wire = Wire(tmp_path, config_with_tools(tmp_path, []))
    arguments = {"request": "wait", "plan": WAITING_PLAN}
    wire.send({"id": 2, "method": "tools/call", "params": {"name": "run", "arguments": arguments}})
    wire.wait_for_stderr("s2: wait long")

    wire.process.send_signal(signal.SIGTERM)

    assert wire.exited() == 128 + signal.SIGTERM
    end = records(log_of(tmp_path))[-1]
    assert (end["event"], end["status"]) == ("run_end", "interrupted")


def test_a_cancelled_call_ends_its_run_as_interrupted_on_the_record_and_the_server_goes_on(tmp_path: Path) -> None:
    answers: dict[str, CallToolResult] = {}

    async def script(client: ClientSession) -> None:
        waiting = anyio.Event()

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            if "s2: wait long" in (message or ""):
                waiting.set()

        async with anyio.create_task_group() as calls:
            arguments = {"request": "wait", "plan": WAITING_PLAN}
            calls.start_soon(lambda: client.call_tool("run", arguments, progress_callback=on_progress))
            await waiting.wait()
            calls.cancel_scope.cancel()  # the SDK sends notifications/cancelled for the call
        await anyio.to_thread.run_sync(run_ended, log_of(tmp_path))
        answers["after"] = await client.call_tool("validate", {"plan": PLAN})

    talk(tmp_path, config_with_tools(tmp_path, []), script)

    end = records(log_of(tmp_path))[-1]
    assert (end["event"], end["status"]) == ("run_end", "interrupted")
    assert answers["after"].structured_content == {"valid": True, "problems": []}


# -- durable runs ---------------------------------------------------------------------------------------------------


def test_a_durable_run_is_listed_by_runs_and_resume_returns_its_recorded_result(tmp_path: Path) -> None:
    config = config_with_tools(tmp_path, ANSWERS)
    answers: dict[str, CallToolResult] = {}

    async def script(client: ClientSession) -> None:
        answers["run"] = await client.call_tool("run", {"request": REQUEST, "durable": True})
        answers["runs"] = await client.call_tool("runs", {})
        answers["pending"] = await client.call_tool("runs", {"status": "pending"})
        run_id = (answers["run"].structured_content or {})["correlation_id"]
        answers["resume"] = await client.call_tool("resume", {"run_id": run_id})

    talk(tmp_path, config, script)

    run = answers["run"].structured_content
    assert run is not None and run["status"] == "completed" and run["outputs"]["s1"]["output"] == 15
    listed = (answers["runs"].structured_content or {})["runs"]
    assert [(r["id"], r["status"], r["request"]) for r in listed] == [(run["correlation_id"], "completed", REQUEST)]
    assert run["correlation_id"] in text(answers["runs"])
    assert answers["pending"].structured_content == {"runs": []}
    resumed = answers["resume"].structured_content
    assert resumed is not None and resumed["correlation_id"] == run["correlation_id"]
    assert (resumed["status"], resumed["outputs"]) == ("completed", run["outputs"])
    runs_cli = invoke("runs", "--config", config, "--json")  # the CLI sees the same record
    assert_exit(runs_cli, 0)
    assert [r["id"] for r in json.loads(runs_cli.stdout)] == [run["correlation_id"]]


def test_a_call_that_needs_approval_leaves_the_run_awaiting_and_aeon_approve_lets_the_server_finish_it(
    tmp_path: Path,
) -> None:
    config = config_with_tools(tmp_path, [])
    step = {"step_id": "s1", "description": "say hi", "tool": "echo", "args": {"text": "hi"}, "requires_approval": True}
    answers: dict[str, Any] = {}

    def approve(run_id: str) -> subprocess.CompletedProcess[str]:
        command = [*AEON, "approve", run_id, "--by", "tester", "--config", str(config), "--json"]
        environ = {**os.environ, **env(tmp_path)}
        return subprocess.run(command, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=60)

    async def script(client: ClientSession) -> None:
        answers["run"] = await client.call_tool("run", {"request": "say hi", "plan": {"goal": "hi", "steps": [step]}})
        run_id = (answers["run"].structured_content or {})["correlation_id"]
        answers["approve"] = await anyio.to_thread.run_sync(approve, run_id)
        answers["resume"] = await client.call_tool("resume", {"run_id": run_id})

    talk(tmp_path, config, script)

    waiting = answers["run"]
    assert not waiting.is_error and waiting.structured_content is not None
    assert waiting.structured_content["status"] == "awaiting_approval"
    assert waiting.structured_content["pending_approval"]["tool"] == "echo"
    assert any("may need approval" in w for w in waiting.structured_content["warnings"])
    approved = answers["approve"]
    assert approved.returncode == 0, approved.stderr[-2000:]
    assert json.loads(approved.stdout)["outputs"]["s1"]["output"] == "hi"
    resumed = answers["resume"].structured_content
    assert resumed is not None and (resumed["status"], resumed["outputs"]["s1"]["output"]) == ("completed", "hi")


# -- the command --------------------------------------------------------------------------------------------------


def test_mcp_help_and_the_readme_show_the_same_client_config_snippet(tmp_path: Path) -> None:
    result = invoke("mcp", "--help")

    assert_exit(result, 0)
    snippet = json.loads(result.stdout[result.stdout.index("{") : result.stdout.rindex("}") + 1])
    server = snippet["mcpServers"]["aeon"]
    assert server["command"] == "aeon" and server["args"][:2] == ["mcp", "--config"]
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Aeon as an MCP server\n", 1)[1]
    assert json.loads(section.split("```json\n", 1)[1].split("```", 1)[0]) == snippet


def test_a_broken_config_stops_aeon_mcp_with_exit_2_and_one_line_before_serving(tmp_path: Path) -> None:
    config = tmp_path / "aeon.yaml"
    config.write_text(yaml.safe_dump({"run": {"ttl": "many"}}), encoding="utf-8")
    done = subprocess.run(
        [*AEON, "mcp", "--config", str(config)],
        cwd=tmp_path,
        env={**os.environ, **env(tmp_path)},
        input="",
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "run.ttl" in done.stderr


def test_aeon_help_and_version_do_not_import_the_mcp_sdk(tmp_path: Path) -> None:
    probe = (
        "import sys\nfrom aeon.entrypoints.cli import main\n"
        "for argv in (['aeon', '--version'], ['aeon', '--help']):\n"
        "    sys.argv = argv\n    try:\n        main()\n    except SystemExit:\n        pass\n"
        "print('mcp' in sys.modules, file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env={**os.environ, **env(tmp_path)}, capture_output=True, text=True, timeout=30
    )

    assert done.stderr.strip().splitlines()[-1] == "False"
    assert "mcp" in done.stdout  # the command is listed


def test_a_run_said_not_durable_that_may_need_approval_is_refused_not_made_durable(tmp_path: Path) -> None:
    config = config_with_tools(tmp_path, [])
    step = {"step_id": "s1", "description": "say hi", "tool": "echo", "args": {"text": "hi"}, "requires_approval": True}
    answers: dict[str, Any] = {}

    async def script(client: ClientSession) -> None:
        plan = {"goal": "hi", "steps": [step]}
        answers["run"] = await client.call_tool("run", {"request": "say hi", "plan": plan, "durable": False})

    talk(tmp_path, config, script)

    refused = answers["run"]
    assert refused.is_error, refused
    text = refused.content[0].text  # type: ignore[union-attr]
    assert "may need approval and nobody can be asked here" in text and "durable: false" in text
