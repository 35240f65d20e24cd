"""Who stops MCP servers: the container's shutdown, the command that started them whatever way it ends, and the
interpreter's exit for tools whose container nobody shut down — never the garbage collector under a caller."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

import aeon
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.container import build_container

from cli_harness import assert_exit, invoke, scripted_config
from mcp_harness import new_tag, processes_with, stdio_args

pytestmark = pytest.mark.usefixtures("isolated_env")


def server(tag: str) -> dict[str, object]:
    return {"name": "test", "command": sys.executable, "args": stdio_args(tag), "include": ["add"]}


def test_the_containers_shutdown_stops_its_servers(tmp_path: Path) -> None:
    tag = new_tag()
    config = scripted_config(tmp_path, [], tools={"mcp": [server(tag)], "approval": {"add": True}})
    container = build_container(load_settings(config))

    tools = container.tools()

    assert [t.name for t in tools.list() if t.server] == ["add"] and len(processes_with(tag)) == 1
    assert tools.get("add").requires_approval  # type: ignore[union-attr]  # tools.approval: over its readOnlyHint
    container.shutdown_resources()
    assert processes_with(tag) == []


def test_tools_of_a_dropped_container_work_until_exit_then_stop(tmp_path: Path) -> None:
    tag = new_tag()
    config = tmp_path / "mcp.yaml"
    config.write_text(yaml.safe_dump({"tools": {"mcp": [server(tag)]}}), encoding="utf-8")
    code = textwrap.dedent(
        f"""
        import asyncio, gc
        from pathlib import Path
        from aeon.entrypoints.container import build_container
        from aeon.entrypoints.config.layers import load_settings
        tools = build_container(load_settings(Path({str(config)!r}))).tools()  # the container is dropped here
        gc.collect()
        print(asyncio.run(tools.invoke("add", {{"a": 1, "b": 2}})).output)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(aeon.__file__).parents[1])}

    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'result': 3}"
    assert processes_with(tag) == []  # stopped at interpreter exit


def test_a_run_that_stops_after_its_servers_started_leaves_none_behind(tmp_path: Path) -> None:
    tag = new_tag()
    config = scripted_config(tmp_path, [], tools={"mcp": [server(tag)]})
    plan = tmp_path / "plan.json"
    plan.write_text('{"goal": "g", "steps": [{"step_id": "s1", "description": "d", "tool": "nope"}]}')

    out = invoke("run", "anything", "--config", config, "--plan", plan)

    assert_exit(out, 2)  # a hand-written plan naming a tool nobody offers, found once the servers listed theirs
    assert "tool 'nope'" in out.stderr
    assert processes_with(tag) == []
