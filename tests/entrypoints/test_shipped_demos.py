"""The shipped scripted demos reproduce each multi-pass and recursive-planning scenario from the command line."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from aeon.entrypoints.cli import app

CONFIG = Path(__file__).resolve().parents[2] / "config"
runner = CliRunner()


def demo(tmp_path: Path, name: str, request: str, *extra: str) -> tuple[int, dict[str, Any], dict[str, Any], str]:
    history = tmp_path / "h.json"
    result = runner.invoke(
        app,
        [
            "run",
            request,
            "--config",
            str(CONFIG / f"scripted-{name}.yaml"),
            "--json",
            "-q",
            "--history",
            str(history),
            "--log-file",
            str(tmp_path / "run.jsonl"),
            *extra,
        ],
    )
    inspected = runner.invoke(app, ["inspect", str(history)])
    assert inspected.exit_code == 0, inspected.stdout
    return result.exit_code, json.loads(result.stdout), json.loads(history.read_text()), inspected.stdout


def test_two_pass_demo_runs_exactly_two_passes_and_inspect_shows_both(tmp_path):
    code, doc, history, shown = demo(tmp_path, "two-pass", "calculate the sum of 5 and 10")
    assert code == 0 and doc["converged"] is True and len(history["passes"]) == 2
    assert "pass 1 " in shown and "pass 2 " in shown and "reasons incomplete" in shown
    assert "reasons complete, coherent, consistent" in shown


def test_never_converging_demo_with_ttl_1_expires_after_one_cycle(tmp_path):
    code, doc, history, _ = demo(tmp_path, "never-converges", "calculate the sum of 5 and 10", "--ttl", "1")
    assert code == 3 and doc["ttl_expiration"]["expiration_type"] == "phase_boundary"
    assert len(history["passes"]) == 1
    records = [json.loads(x) for x in (tmp_path / "run.jsonl").read_text().splitlines()]
    bounds = [r for r in records if r["event"] in ("phase_entry", "phase_exit")]
    assert [r["phase"] for r in bounds] == ["A", "A", "B", "B", "C", "C", "D", "D"]
    assert {r["correlation_id"] for r in bounds} == {doc["correlation_id"]}


def test_malformed_convergence_demo_retries_once_then_aborts_with_a_phase_code(tmp_path):
    code, doc, _, _ = demo(tmp_path, "malformed-convergence", "calculate the sum of 5 and 10")
    assert code == 4 and doc["error"]["code"] == "AEON.PHASE_TRANSITION.MALFORMED_EVALUATION"
    records = [json.loads(x) for x in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert [r["event"] for r in records].count("phase_retry") == 1 and records[-1]["event"] == "run_end"


def test_subplan_demo_decomposes_a_step_and_finishes(tmp_path):
    code, doc, _, shown = demo(tmp_path, "subplan", "add 5 and 10 and explain whether it is odd")
    assert code == 0 and [s["step_id"] for s in doc["plan"]["steps"]] == ["s1", "s2.1", "s2.2"]
    assert "refinement SUBPLAN_CREATE s2: applied" in shown


def test_deep_nesting_demo_flags_manual_intervention_in_json_and_inspect(tmp_path):
    code, doc, _, shown = demo(tmp_path, "deep-nesting", "reason about it")
    assert code == 3
    manual = [a for a in doc["advisories"] if a["kind"] == "manual_intervention"]
    assert manual and manual[0]["step_id"] == "s1" + ".1" * 5
    assert f"manual intervention needed: {manual[0]['step_id']}" in shown


def test_refining_a_completed_step_is_rejected_and_its_output_stays(tmp_path):
    code, _, history, shown = demo(tmp_path, "refine-completed-step", "calculate the sum of 5 and 10")
    assert code == 0 and "rejected (advisory)" in shown
    for p in history["passes"]:
        s1 = next(s for s in p["final_plan_state"]["steps"] if s["step_id"] == "s1")
        assert s1["step_output"] == 15


@pytest.mark.parametrize("name", ["simple-request", "complex-request"])
def test_ttl_allocation_demos_stay_within_the_cap_and_say_why(tmp_path, name):
    _, _, history, shown = demo(tmp_path, name, "calculate the sum of 5 and 10")
    depth = history["passes"][0]["adaptive_depth"]
    assert 1 <= depth["allocated_ttl"] <= 4 and "complexity" in shown
    expected = 1 if name == "simple-request" else 4
    assert depth["allocated_ttl"] == expected


def test_the_simple_request_demo_converges_in_two_llm_calls_with_every_phase_on_record(tmp_path):
    code, doc, history, shown = demo(tmp_path, "simple-request", "calculate the sum of 5 and 10")
    assert code == 0 and doc["converged"] is True and doc["outputs"]["s1"]["output"] == 15
    # phase A asks for the profile and the plan in one call; the evaluation is the other
    assert doc["budget"]["llm_calls"] == 2
    assert [(c["purpose"], c["phase"]) for c in doc["ledger"]["calls"]] == [
        ("profile_and_plan", "A"),
        ("evaluate", "C"),
    ]
    records = [json.loads(x) for x in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert [r["phase"] for r in records if r["event"] == "phase_entry"] == ["A", "B", "C", "D"]
    assert [r["outcome"] for r in records if r["event"] == "phase_exit"] == ["success"] * 4
    # phase A still produced both contracts' outputs, and the record says where the profile came from
    [allocated] = [r for r in records if r["event"] == "ttl_allocated"]
    assert allocated["profile_source"] == "inferred with the plan in one call (profile_and_plan)"
    assert allocated["profile_version"] == 1 and allocated["allocated_ttl"] == 1
    [profile] = history["profiles"]
    assert profile["reasoning_depth"] == 1 and profile["raw_inference"] == "depth 1 task"
    assert history["passes"][0]["task_profile"] == profile
    assert [s["step_id"] for s in history["passes"][0]["plan_state"]["steps"]] == ["s1"]
    assert "pass 1 " in shown


def test_the_demo_with_a_reasoning_step_takes_three_calls_one_per_phase_a_step_and_evaluation(tmp_path):
    code, doc, _, _ = demo(tmp_path, "demo", "calculate the sum of 5 and 10")
    assert code == 0 and doc["converged"] is True
    assert [c["purpose"] for c in doc["ledger"]["calls"]] == ["profile_and_plan", "reason:s2", "evaluate"]


def test_each_demo_of_the_readme_table_opens_with_what_to_expect_and_the_request_it_scripts() -> None:
    readme = (CONFIG.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Scripted demos", 1)[1].split("\n## ", 1)[0]
    names = sorted(set(re.findall(r"`config/(scripted-[\w-]+\.yaml)`", table)))
    assert len(names) >= 9
    for name in names:
        lines = (CONFIG / name).read_text(encoding="utf-8").splitlines()
        comment = list(itertools.takewhile(lambda line: line.startswith("#"), lines))
        assert comment and len(comment[0]) > 20, f"{name}: no first line saying what to expect"
        assert re.search(r'"[^"]{5,}"', " ".join(comment)), f"{name}: its comment names no request in quotes"
        for line in comment:
            if line.startswith("# Try:"):
                assert f"--config config/{name}" in line, f"{name}: its Try line runs another config"
