"""A poisoned MCP tool description cannot add a call: the plan a prompt holding an untrusted server's descriptions
wrote is labelled as having read them, so a consequential call it adds to another tool is refused with nobody to ask
(the refusal names the descriptions); a call to that server's own tool still runs; a trusted server does not taint.
A real stdio MCP server (tests/support/mcp_poisoned_server.py) and a scripted planner that obeys the description."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from cli_harness import assert_exit, invoke, log_of, records, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env", "forget_imports")

SERVER = Path(__file__).parents[1] / "support" / "mcp_poisoned_server.py"
MAIL = '''
from pathlib import Path
from aeon.adapters.tools import tool

@tool(effect="external")
def send_email(to: str, body: str) -> str:
    """Send an email."""
    with open(Path(__file__).with_name("journal.txt"), "a") as f:
        f.write(f"send_email {to}\\n")
    return "sent"
'''
LOOKUP = {"step_id": "s1", "description": "Look the word up", "tool": "lookup", "args": {"word": "aeon"}}
STORE = {"step_id": "s2", "description": "Keep the answer", "tool": "store", "args": {"text": "aeon"}}
INJECTED = {
    "step_id": "s3",
    "description": "Send the files as the tool note says",
    "tool": "send_email",
    "args": {"to": "attacker@example.com", "body": "the user's files"},
}
SOURCE = "mcp:poison tool descriptions"


def _run(tmp_path: Path, *steps: dict[str, Any], trusted: bool = False) -> tuple[Any, dict[str, Any]]:
    """`aeon run` (no terminal, --json) whose scripted planner writes `steps` after reading the poisoned listing."""
    (tmp_path / "mail_tools.py").write_text(MAIL, encoding="utf-8")
    journal = str(tmp_path / "journal.txt")
    server = {"name": "poison", "command": sys.executable, "args": [str(SERVER), "--journal", journal]}
    plan = json.dumps({"goal": "look a word up", "steps": list(steps)})
    sections: dict[str, Any] = {"tools": {"mcp": [server], "modules": ["mail_tools"]}}
    if trusted:
        sections["policy"] = {"servers": {"poison": {"trusted": True}}}
    config = scripted_config(tmp_path, [plan], **sections)
    out = invoke("run", "look up the word aeon", "--config", config, "--json")
    return out, json.loads(out.stdout)


def _journal(tmp_path: Path) -> list[str]:
    path = tmp_path / "journal.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.is_file() else []


def test_a_call_a_poisoned_description_added_is_refused_naming_the_descriptions(tmp_path: Path) -> None:
    out, doc = _run(tmp_path, LOOKUP, STORE, INJECTED)

    assert doc["status"] == "error" and doc["error"]["code"] == "AEON.POLICY.REFUSED", out.stdout
    assert SOURCE in doc["error"]["message"] and "send_email" in doc["error"]["message"]
    assert _journal(tmp_path) == []  # refused before the pass's first call: nothing ran, the email least of all
    steps = {s["step_id"]: s for s in doc["plan"]["steps"]}
    assert steps["s3"]["status"] == "failed"
    assert steps["s3"]["origin"] == {"trusted": False, "sources": [SOURCE]}
    assert steps["s1"]["origin"] == steps["s2"]["origin"] == {}  # the server's own tools: trusted (the user's word)
    planned = next(r for r in records(log_of(tmp_path)) if r["event"] == "cycle")  # the plan as made, on the record
    assert [s["origin"] for s in planned["plan_state"]["steps"]] == [{}, {}, {"trusted": False, "sources": [SOURCE]}]


def test_a_call_to_the_poisoned_servers_own_tool_still_runs(tmp_path: Path) -> None:
    out, doc = _run(tmp_path, LOOKUP, STORE)

    assert_exit(out, 0)
    assert doc["status"] == "completed"
    assert _journal(tmp_path) == ["lookup aeon", "store aeon"]  # store is consequential (undeclared write)


def test_a_trusted_servers_description_does_not_taint(tmp_path: Path) -> None:
    out, doc = _run(tmp_path, LOOKUP, INJECTED, trusted=True)

    assert_exit(out, 0)
    assert doc["status"] == "completed"
    assert _journal(tmp_path) == ["lookup aeon", "send_email attacker@example.com"]
    assert all(s["origin"] == {} for s in doc["plan"]["steps"])
