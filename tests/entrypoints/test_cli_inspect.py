"""`aeon run --history` and `aeon inspect` as a user sees them (02 US6; 05 US6 live progress)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

from aeon.entrypoints.cli import app

from multipass import SUM_PLAN, add_step, first, profile, refine, verdict

REQUEST = "calculate the sum of 5 and 10"
VAGUE = {
    "type": "specificity",
    "severity": "LOW",
    "step_id": "s1",
    "description": "the sum is computed but never stated",
    "repair": "add a step that states the sum",
}

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("isolated_env")


def config(tmp_path: Path, responses: Sequence[str | Mapping[str, Any]]) -> Path:
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"responses": list(responses)}), encoding="utf-8")
    data = {
        "llm": {"adapter": "scripted", "script": "script.yaml"},
        "log": {"path": str(tmp_path / "logs" / "run.jsonl")},
    }
    path = tmp_path / "aeon.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def invoke(*args: str | Path) -> Result:
    result = runner.invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.stdout + result.stderr
    return result


def two_pass_script() -> list[str]:
    return [
        first(profile(3), SUM_PLAN),
        verdict(False, issues=[VAGUE]),  # VAGUE is LOW: not a blocker, but it is what triggers the refinement
        refine(add_step("s2", "State the sum from s1", agent="llm")),
        "The sum is 15.",
        verdict(True),
    ]


@pytest.fixture
def history(tmp_path: Path) -> tuple[Result, Path]:
    h = tmp_path / "out" / "h.json"
    result = invoke("run", REQUEST, "--config", config(tmp_path, two_pass_script()), "--history", h)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result, h


# -- aeon run --history -----------------------------------------------------------------------------------------------
def test_run_writes_a_json_history_with_both_passes(history):
    _, h = history
    doc = json.loads(h.read_text(encoding="utf-8"))
    assert [p["pass_number"] for p in doc["passes"]] == [1, 2]
    assert doc["task_input"] == REQUEST and doc["final_result"]["converged"] is True
    assert doc["overall_statistics"]["total_passes"] == 2
    assert [p["evaluation_results"]["convergence"]["converged"] for p in doc["passes"]] == [False, True]


def test_live_progress_on_stderr_shows_passes_phases_and_evaluations(history):
    result, _ = history
    lines = result.stderr.splitlines()
    for wanted in ("pass 1 · A", "pass 1 · B", "pass 1 · C", "pass 1 · D", "pass 2 · B", "pass 2 · C", "pass 2 · D"):
        assert any(line.endswith(wanted) for line in lines), wanted
    assert not any(line.endswith("pass 2 · A") for line in lines)
    evaluations = [line.strip() for line in lines if line.strip().startswith("evaluation:")]
    assert len(evaluations) == 2
    assert "not converged" in evaluations[0] and "completeness 0.40" in evaluations[0]
    assert evaluations[1].startswith("evaluation: converged")
    assert "The sum is 15." in result.stdout and "pass 1 · A" not in result.stdout


def test_a_never_converging_run_cut_by_ttl_1_exits_3_and_still_writes_its_history(tmp_path):
    h = tmp_path / "h.json"
    cfg = config(tmp_path, [first(profile(3), SUM_PLAN), verdict(False)])
    result = invoke("run", REQUEST, "--config", cfg, "--ttl", "1", "--history", h)
    assert result.exit_code == 3, (result.stdout, result.stderr)
    doc = json.loads(h.read_text(encoding="utf-8"))
    assert len(doc["passes"]) == 1 and doc["final_result"]["converged"] is False
    assert doc["final_result"]["metadata"]["ttl_expiration"]["expiration_type"] == "phase_boundary"
    shown = invoke("inspect", h)
    assert shown.exit_code == 0 and "pass 1 " in shown.stdout and "pass 2 " not in shown.stdout


# -- aeon inspect -----------------------------------------------------------------------------------------------------
def pass_block(text: str, number: int) -> str:
    """The lines of one pass in the inspect output (from its header to the next blank line)."""
    blocks = [b for b in text.split("\n\n") if b.startswith(f"pass {number} ")]
    assert len(blocks) == 1, text
    return blocks[0]


def test_inspect_shows_both_passes_with_scores_and_reason_codes(history):
    _, h = history
    result = invoke("inspect", h)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    first, second = pass_block(out, 1), pass_block(out, 2)
    assert "not converged" in first and "completeness 0.4" in first and "coherence 0.9" in first
    assert "incomplete" in first
    assert "convergence: converged" in second and "complete, coherent, consistent" in second


def test_inspect_shows_the_phases_with_their_timings(history):
    _, h = history
    out = invoke("inspect", h).stdout
    first, second = pass_block(out, 1), pass_block(out, 2)
    phases_1 = next(line for line in first.splitlines() if line.strip().startswith("phases:"))
    phases_2 = next(line for line in second.splitlines() if line.strip().startswith("phases:"))
    assert [p.split()[0] for p in phases_1.split(":", 1)[1].split(",")] == ["A", "B", "C", "D"]
    assert [p.split()[0] for p in phases_2.split(":", 1)[1].split(",")] == ["B", "C", "D"]
    for p in phases_1.split(":", 1)[1].split(","):
        assert p.strip().split()[1].endswith("s") and "(success)" in p


def test_inspect_shows_the_refinement_with_the_issue_that_triggered_it(history):
    _, h = history
    out = invoke("inspect", h).stdout
    first = pass_block(out, 1)
    (refinement,) = [line for line in first.splitlines() if line.strip().startswith("refinement")]
    assert "ADD s2" in refinement and "applied" in refinement
    issue_line = next(line for line in first.splitlines() if "never stated" in line)
    issue_id = issue_line.split()[1]
    assert issue_id in refinement.split("←")[1]  # the refinement names the validation issue behind it
    assert "refinement" not in pass_block(out, 2)


def test_inspect_shows_the_depth_decision_and_its_reason(history):
    _, h = history
    out = invoke("inspect", h).stdout
    first, second = pass_block(out, 1), pass_block(out, 2)
    assert "depth decision: continue — not converged" in first
    assert "depth decision: halt — converged" in second
    assert "allocated TTL" in first and "complexity" in first  # the allocation and why


def test_inspect_json_is_one_document_with_scores_and_patterns(history):
    _, h = history
    result = invoke("inspect", h, "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)  # exactly one JSON document, nothing else on stdout
    scores = [p["scores"] for p in doc["passes"]]
    assert [(s["completeness"], s["coherence"]) for s in scores] == [(0.4, 0.9), (1.0, 1.0)]
    assert doc["passes"][0]["refinements"][0]["triggered_by"] == [doc["passes"][0]["validation_issues"][0]["issue_id"]]
    patterns = doc["patterns"]
    assert patterns["convergence_blockers"] == {"incomplete": 1}
    assert [(d["pass"], d["decision"]) for d in patterns["depth_adjustments"]] == [(1, "continue"), (2, "halt")]
    assert all(d["reason"] for d in patterns["depth_adjustments"])


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("missing.json", None),
        ("other.json", json.dumps({"goal": "g", "steps": []})),
        ("list.json", json.dumps([1, 2])),
        ("broken.json", '{"execution_id": '),
    ],
)
def test_inspect_of_something_that_is_not_a_history_exits_2_with_one_line(tmp_path, name, content):
    path = tmp_path / name
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = invoke("inspect", path)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aeon: ")


@pytest.mark.parametrize(
    "doc",
    [{"execution_id": "x", "passes": ["not a pass"]}, {"execution_id": "x", "passes": [], "final_result": None}],
    ids=["pass-not-an-object", "null-final-result"],
)
def test_inspect_of_a_malformed_history_exits_2_with_one_line(tmp_path, doc):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = runner.invoke(app, ["inspect", str(path)])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
