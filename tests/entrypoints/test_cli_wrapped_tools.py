"""The new user's way of exposing an API client (functools.wraps around each bound method) through the CLI: the
tools register and run, and a hand-written plan naming a tool that is not registered stops before any LLM call."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from cli_harness import REQUEST, assert_exit, invoke, log_of, one_line, plan_json, records, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env")

API_TOOLS = """
import functools
from aeon.adapters.tools import tool

class Api:
    def __init__(self):
        self.cwd = "/"

    def cd(self, path: str) -> str:
        \"\"\"Change the working folder and return it.\"\"\"
        self.cwd = path
        return self.cwd

    def pwd(self) -> str:
        \"\"\"The working folder.\"\"\"
        return self.cwd

api = Api()

def expose(method):
    @functools.wraps(method)
    def call(**kw):
        return method(**kw)
    return tool(call)

cd = expose(api.cd)
pwd = expose(api.pwd)
"""


def api_config(tmp_path: Path) -> Path:
    module = f"api_tools_{tmp_path.name}.py"  # one module name per test: the CLI runs in this process
    (tmp_path / module).write_text(textwrap.dedent(API_TOOLS), encoding="utf-8")
    return scripted_config(tmp_path, [], tools={"modules": [module]})  # no answer: an LLM call would fail


def test_wrapped_api_methods_are_listed_and_a_plan_of_them_runs_the_api(tmp_path: Path) -> None:
    config = api_config(tmp_path)
    listed = invoke("tools", "--config", config, "--json")
    assert_exit(listed, 0)
    assert {t["name"] for t in json.loads(listed.stdout)} >= {"cd", "pwd"}

    plan = tmp_path / "plan.json"
    steps = [
        {"step_id": "go", "description": "Go to /srv", "tool": "cd", "args": {"path": "/srv"}},
        {"step_id": "where", "description": "Where am I", "tool": "pwd", "args": {}, "dependencies": ["go"]},
    ]
    plan.write_text(plan_json(*steps), encoding="utf-8")
    result = invoke("run", REQUEST, "--plan", plan, "--config", config, "--json")
    assert_exit(result, 0)
    doc = json.loads(result.stdout)
    assert doc["status"] == "completed"
    assert {sid: out["output"] for sid, out in doc["outputs"].items()} == {"go": "/srv", "where": "/srv"}
    assert doc["budget"]["llm_calls"] == 0


def test_a_plan_naming_an_unregistered_tool_is_an_input_error_before_any_llm_call(tmp_path: Path) -> None:
    config = api_config(tmp_path)
    plan = tmp_path / "plan.json"
    steps = [
        {"step_id": "go", "description": "Go to /srv", "tool": "cd", "args": {"path": "/srv"}},
        {"step_id": "look", "description": "Where am I", "tool": "pwdd", "args": {}},
    ]
    plan.write_text(plan_json(*steps), encoding="utf-8")
    result = invoke("run", REQUEST, "--plan", plan, "--config", config)
    assert_exit(result, 2)
    line = one_line(result.stderr.splitlines()[-1])
    assert f"plan {plan}: step 'look' names tool 'pwdd', which is not registered (closest: pwd)" in line
    assert not log_of(tmp_path).exists() or not any(r.get("event") == "llm_call" for r in records(log_of(tmp_path)))
