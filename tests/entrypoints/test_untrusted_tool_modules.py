"""A tools module's top level is untrusted code: it cannot end `aeon`, write into its stdout or hold it for ever."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from cli_harness import assert_exit, invoke, plan_json, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env", "forget_imports")

TOOL = '''
from aeon.adapters.tools import tool


@tool
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()
'''
STEP = {"step_id": "s1", "description": "Shout hi", "tool": "shout", "args": {"text": "hi"}}


def run_with_module(tmp_path: Path, name: str, top_level: str, **sections: Any) -> Result:
    """`aeon run --json` with a plan calling the module's tool, the module's top level ending with `top_level`."""
    (tmp_path / f"{name}.py").write_text(f"{TOOL}\n{top_level}\n", encoding="utf-8")
    tools = {"modules": [name], **sections.pop("tools", {})}
    config = scripted_config(tmp_path, [], tools=tools, **sections)
    (tmp_path / "plan.json").write_text(plan_json(STEP), encoding="utf-8")
    return invoke("run", "shout hi", "--plan", "plan.json", "--config", config, "--json")


def error_message(result: Result) -> str:
    doc = json.loads(result.stdout)
    assert doc["status"] == "error" and doc["error"]["code"] == "AEON.TOOL.REGISTRATION"
    return str(doc["error"]["message"])


@pytest.mark.parametrize(
    ("name", "top_level", "said"),
    [
        ("exits_zero", "import sys\nsys.exit(0)", "called sys.exit(0)"),
        ("exits_usage", "import sys\nsys.exit(2)", "called sys.exit(2)"),
        ("interrupts", "raise KeyboardInterrupt", "raised KeyboardInterrupt"),
        ("base_raiser", "class Stop(BaseException):\n    pass\nraise Stop('no more')", "raised Stop: no more"),
    ],
)
def test_a_module_that_leaves_at_import_is_a_registration_error_naming_it(
    tmp_path: Path, name: str, top_level: str, said: str
) -> None:
    result = run_with_module(tmp_path, name, top_level)
    assert_exit(result, 2)
    message = error_message(result)
    assert f"tools module {name!r}" in message and said in message


def test_what_a_module_prints_at_import_goes_to_stderr_and_the_json_document_stays_whole(tmp_path: Path) -> None:
    top = "import sys\nprint('hello from printer')\nsys.stdout.write('{not json\\n')"
    result = run_with_module(tmp_path, "printer", top)
    assert_exit(result, 0)
    doc = json.loads(result.stdout)  # exactly one JSON document, nothing before or after it
    assert doc["status"] == "completed" and doc["outputs"]["s1"]["output"] == "HI"
    assert "hello from printer" in result.stderr and "{not json" in result.stderr


@pytest.mark.parametrize(
    ("name", "sections", "bound"),
    [
        ("hangs_import_timeout", {"tools": {"import_timeout": 0.5}}, "0.5 s"),
        ("hangs_max_seconds", {"run": {"max_seconds": 0.4}}, "0.4 s"),
    ],
)
def test_a_module_that_does_not_finish_importing_in_time_is_an_error_naming_it(
    tmp_path: Path, name: str, sections: dict[str, Any], bound: str
) -> None:
    # Blocks 20 s, not for ever: the abandoned import thread of this test process ends on its own.
    began = time.monotonic()
    result = run_with_module(tmp_path, name, "import threading\nthreading.Event().wait(20)", **sections)
    assert time.monotonic() - began < 10  # the bound, not the module's 20 s
    assert_exit(result, 2)
    message = error_message(result)
    assert f"tools module {name!r} did not finish importing within {bound}" in message
