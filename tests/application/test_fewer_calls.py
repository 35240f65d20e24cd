"""Fewer calls for the same answers: the profile and the plan in one call, one evaluation call per pass, and no
profiling call when the user gives both the TTL and the plan."""

from __future__ import annotations

import json
from pathlib import Path

from cli_harness import REQUEST, SUM_STEP, assert_exit, invoke, log_of, plan_json, records, scripted_config
from multipass import first, profile, verdict

PROFILE = profile(1, sufficiency=1.0, breadth="narrow", confidence="low")
EVALUATION = verdict(True)


def purposes(tmp_path: Path) -> list[str]:
    return [r["purpose"] for r in records(log_of(tmp_path)) if r["event"] == "llm_call"]


def test_a_given_plan_and_ttl_leave_nothing_to_profile_one_evaluation_call_is_the_whole_run(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(plan_json(SUM_STEP))
    config = scripted_config(tmp_path, [EVALUATION], run={"evaluate": True})
    out = invoke("run", REQUEST, "--config", config, "--plan", plan, "--ttl", "2", "--json", "-q")
    assert_exit(out, 0)
    doc = json.loads(out.stdout)
    assert doc["status"] == "completed" and doc["converged"] is True and doc["outputs"]["s1"]["output"] == 15
    assert purposes(tmp_path) == ["evaluate"]
    [allocated] = [r for r in records(log_of(tmp_path)) if r["event"] == "ttl_allocated"]
    assert allocated["allocated_ttl"] == 2 and "no profiling call" in allocated["adjustment_reason"]


def test_a_given_plan_without_a_ttl_is_still_profiled_for_its_depth(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(plan_json(SUM_STEP))
    config = scripted_config(tmp_path, [PROFILE, EVALUATION], run={"evaluate": True})
    out = invoke("run", REQUEST, "--config", config, "--plan", plan, "--json", "-q")
    assert_exit(out, 0)
    assert purposes(tmp_path) == ["profile", "evaluate"]


def test_a_pass_is_evaluated_in_one_call_that_sees_the_outputs_and_the_facts(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [first(PROFILE, plan_json(SUM_STEP)), EVALUATION], run={"evaluate": True})
    out = invoke("run", REQUEST, "--config", config, "--json", "-q")
    assert_exit(out, 0)
    assert purposes(tmp_path) == ["profile_and_plan", "evaluate"]
    [evaluation] = [r for r in records(log_of(tmp_path)) if r["event"] == "llm_call" and r["purpose"] == "evaluate"]
    assert evaluation["phase"] == "EVALUATE"
    doc = json.loads(out.stdout)
    assert doc["convergence"]["reason_codes"] == ["complete", "coherent", "consistent"]
