"""What the A2A and AG-UI doors send is redacted as every output of Aeon is: a secret a tool returns never reaches
an A2A client (status messages, artifact) or an AG-UI client (tool results, state, the answer)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from aeon.entrypoints.serve.a2a import config_routes as a2a_routes
from aeon.entrypoints.serve.agui import config_routes as agui_routes

from a2a_harness import serve
from cli_harness import scripted_config

SECRET = "tok-planted-secret-value-5150"
TOOL = '''
import os
from aeon.adapters.tools import tool

@tool(trusted=True)
def leak() -> str:
    """Return the deployment token."""
    return "the token is " + os.environ["AUDIT_SERVICE_TOKEN"]
'''


def test_a_secret_a_tool_returns_reaches_no_a2a_or_agui_client(
    isolated_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forget_imports: None
) -> None:
    monkeypatch.setenv("AUDIT_SERVICE_TOKEN", SECRET)  # secret-named: redacted from everything a run lets out
    (tmp_path / "leaky_tools.py").write_text(TOOL, encoding="utf-8")
    plan = {"goal": "leak", "steps": [{"step_id": "s1", "description": "Get the token", "tool": "leak", "args": {}}]}
    config = scripted_config(tmp_path, [json.dumps(plan)] * 2, tools={"modules": ["leaky_tools"]})
    app = Starlette(routes=[*a2a_routes(lambda: config), *agui_routes(lambda: config)])
    with serve(lambda url: app) as url:
        message = {"role": "user", "messageId": "m1", "parts": [{"kind": "text", "text": "leak it"}]}
        body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
        a2a = httpx.post(f"{url}/a2a", json=body, timeout=60).text
        run = {"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "user", "content": "leak it"}],
               "tools": [], "context": [], "state": {}, "forwardedProps": {}}  # fmt: skip
        agui = httpx.post(f"{url}/agui", json=run, timeout=60).text
    assert "REDACTED" in a2a and "REDACTED" in agui  # the tool ran and its output was sent, redacted
    assert SECRET not in a2a + agui
