"""What a model, a tool or a plan says cannot drive the user's terminal: control sequences reach stdout, stderr and
`aeon inspect` as visible escapes, the JSON documents keep them escaped, and progress shows a step's args clipped."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from aeon.adapters.console import ConsoleProgress
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.container import run_scope

from cli_harness import REQUEST, assert_exit, invoke, plan_json, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env")

CLEAR, TITLE, CSI8, RTL = "\x1b[2J", "\x1b]0;pwned\x07", "\x9b2J", "\u202e"
HOSTILE = f"clear{CLEAR} title{TITLE} c1{CSI8} rtl{RTL}evil"
RAW = ("\x1b", "\x07", "\x9b", RTL)


def _hostile_run(tmp_path: Path, *extra: str | Path) -> tuple[str, str]:
    """A scripted model whose plan and answer carry a screen clear, a title change, a C1 CSI and a bidi override;
    a second step feeds the answer to a tool that fails on it, so tool error text carries them too."""
    steps = (
        {"step_id": "s1", "description": f"say {HOSTILE}", "agent": "llm"},
        {"step_id": "s2", "description": "compute", "tool": "calculator", "args": {"expression": f"1 +{HOSTILE}"}},
    )
    config = scripted_config(tmp_path, [plan_json(*steps, goal=f"goal {HOSTILE}"), f"answer {HOSTILE}"])
    result = invoke("run", REQUEST, "--config", config, *extra)
    assert result.exit_code == 4, (result.stdout, result.stderr)  # the last tool step failed: status failed
    return result.stdout, result.stderr


def test_control_sequences_in_model_and_tool_text_reach_the_terminal_as_visible_escapes(tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    stdout, stderr = _hostile_run(tmp_path, "--history", history)
    inspected = invoke("inspect", history)
    assert_exit(inspected, 0)

    for shown in (stdout, stderr, inspected.stdout):
        assert not [c for c in RAW if c in shown], shown
        assert "clear\\x1b[2J title\\x1b]0;pwned\\x07 c1\\x9b2J rtl\\u202eevil" in shown  # visible, not dropped
    assert "answer clear\\x1b[2J" in stdout
    assert "answer clear\\x1b[2J" in stderr


def test_the_json_documents_escape_control_characters_and_still_hold_the_exact_text(tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    stdout, _ = _hostile_run(tmp_path, "--json", "-q", "--history", history)

    for document in (stdout, history.read_text(encoding="utf-8")):
        assert not [c for c in RAW if c in document]
        assert f"answer {HOSTILE}" in _strings(json.loads(document))  # the exact text, lossless


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_an_error_line_shows_control_characters_escaped(tmp_path: Path) -> None:
    missing = tmp_path / f"no{TITLE}such{CSI8}.yaml"
    result = invoke("run", REQUEST, "--config", missing)

    assert_exit(result, 2)
    assert not [c for c in RAW if c in result.stdout + result.stderr]
    assert "no\\x1b]0;pwned\\x07such\\x9b2J.yaml" in result.stderr


def test_progress_shows_a_steps_huge_args_clipped_not_whole() -> None:
    huge = "x" * 5_000_000
    plan = plan_json({"step_id": "s1", "description": "echo it", "tool": "echo", "args": {"text": huge}})
    err = io.StringIO()
    settings = Settings.model_validate({"run": {"evaluate": False}, "log": {"path": ""}})
    orchestrator = run_scope(settings, llm=ScriptedLLM([plan]), progress=ConsoleProgress(err))

    result = asyncio.run(orchestrator.run("echo a lot"))

    assert result.status.value == "completed"
    assert len(err.getvalue().encode()) < 10_000
    assert 'tool echo {"text": "xxx' in err.getvalue()
