"""Real MCP servers for the MCP client tests: mcp-server-time (PyPI) over stdio, and mcp_test_server.py (built with
the SDK's own MCPServer) over stdio or streamable HTTP on 127.0.0.1; and a way to see that none outlives its test."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from aeon.adapters.tools.mcp import McpServerConfig

TEST_SERVER = Path(__file__).with_name("mcp_test_server.py")
TIME_ARGS = ["-m", "mcp_server_time", "--local-timezone", "UTC"]


def time_server(**fields: object) -> McpServerConfig:
    return McpServerConfig(name="time", command=sys.executable, args=tuple(TIME_ARGS), **fields)  # type: ignore[arg-type]


def stdio_args(tag: str) -> list[str]:
    return [str(TEST_SERVER), "--stdio", "--tag", tag]


def new_tag() -> str:
    return f"aeon-test-{uuid.uuid4().hex[:12]}"


def processes_with(tag: str) -> list[int]:
    """The live processes whose command line holds `tag` (from /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag.encode() in cmdline and state != "Z":
            found.append(int(proc.name))
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def http_server(token: str, header: str = "Authorization") -> Iterator[str]:
    """mcp_test_server.py over streamable HTTP on a free port of 127.0.0.1, wanting `Authorization: Bearer <token>`
    (or `<header>: <token>`); its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(TEST_SERVER), "--port", str(port), "--token", token, "--header", header],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the test MCP server did not listen on port {port}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
