"""Malformed planner answers real models give (tests/corpus/planner_answers.yaml): each is read without an LLM call
when the reading is unambiguous and callable, and goes to the LLM repair otherwise; every repair is on the record."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from aeon.application.llm.jsonfix import parse_json

from harness import run
from multipass import first, profile, verdict

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "planner_answers.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("planner_answers_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench()
CORPUS = bench.load()
CASES = {case["name"]: case for case in CORPUS["cases"]}


def test_the_corpus_names_each_case_once_and_holds_both_outcomes() -> None:
    assert len(CASES) == len(CORPUS["cases"])
    assert {case["expect"] for case in CASES.values()} == {"deterministic", "llm_repair"}


@pytest.mark.parametrize("name", list(CASES))
def test_each_corpus_answer_ends_as_the_corpus_expects(name: str) -> None:
    outcome, calls, why = bench.run_case(CASES[name], CORPUS["tools"])

    assert outcome == CASES[name]["expect"], why  # never "wrong": no guessed plan is ever run
    assert (calls == 0) is (outcome == "deterministic")


def test_the_bench_quick_mode_reports_both_shares_and_passes() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--quick", "--json"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["unexpected"] == []
    assert report["recovered_share"] == 1.0
    assert report["zero_call"] == sum(case["expect"] == "deterministic" for case in CASES.values())
    assert report["zero_call_share"] == round(report["zero_call"] / report["cases"], 3)


def _actions(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["event"] == "supervisor_action"]


def test_every_repair_applied_is_named_on_the_record(tmp_path: Path) -> None:
    r = run(tmp_path, [CASES["think_synonyms_and_capitalised_tool"]["answer"]])

    assert r.result.status == "completed"
    assert (r.doc["counts"]["deterministic_repairs"], r.doc["counts"]["llm_repairs"], len(r.llm.requests)) == (1, 0, 1)
    (action,) = _actions(r.records())
    assert action["kind"] == "deterministic_repair"
    detail = action["detail"]
    for said in ("reasoning block", "read 'name' as 'tool'", "read 'arguments' as 'args'",
                 "tool 'Calculator' is the registered 'calculator'"):  # fmt: skip
        assert said in detail, detail
    assert r.doc["outputs"]["s1"]["output"] == 15


def test_a_bare_expression_is_named_on_the_record_with_the_parameter_it_went_to(tmp_path: Path) -> None:
    r = run(tmp_path, [CASES["bare_expression_as_args"]["answer"]])

    (action,) = _actions(r.records())
    assert "bare args '5 + 10' given as 'calculator'" in action["detail"]
    assert r.doc["plan"]["steps"][0]["args"] == {"expression": "5 + 10"}


def test_the_profile_and_plan_answer_of_a_reasoning_model_is_read_without_an_llm_repair(tmp_path: Path) -> None:
    plan = json.loads(CASES["tool_name_functions_prefix"]["answer"])
    plan["steps"][0].update(tool="functions.calculator", args="5 + 10", description="Add 5 and 10")
    answer = "<think>\nprofile first, then the plan\n</think>\n" + first(profile(2), json.dumps(plan))[:-1]

    r = run(tmp_path, [answer, verdict(True)], evaluate=True)

    assert r.result.status == "completed", r.result.error
    assert (r.doc["counts"]["deterministic_repairs"], r.doc["counts"]["llm_repairs"]) == (1, 0)
    step = r.doc["plan"]["steps"][0]
    assert (step["tool"], step["args"]) == ("calculator", {"expression": "5 + 10"})
    (action,) = _actions(r.records())
    assert "final '}'" in action["detail"] and "'functions.calculator' is the registered" in action["detail"]


def test_an_unregistered_tool_is_never_mapped_and_costs_a_step_repair(tmp_path: Path) -> None:
    fixed = {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expression": "5 + 10"}}
    r = run(tmp_path, [CASES["tool_name_unknown_prefix"]["answer"], json.dumps(fixed)])

    assert r.doc["counts"]["deterministic_repairs"] == 0 and r.doc["counts"]["tool_repairs"] == 1
    assert "Tool 'default_api.calculator' not found" in r.llm.requests[1].messages[-1].content


@pytest.mark.parametrize(
    "text",
    [
        '<think>\n{"goal": "g", "steps": []}\nthe user might want',  # the reasoning never ends
        'A: {"goal": "g", "n": 1}\nB: {"goal": "h", "n": 2}',  # two versions of one answer
        '{"goal": "g", "steps": [{"step_id": "s1"}',  # more than the final brace missing
        '{"goal": "g", "steps": [1, 2],',  # the member after the comma is missing
    ],
    ids=["reasoning-never-closed", "two-answers", "two-brackets-missing", "ends-after-a-comma"],
)
def test_an_answer_without_one_reading_is_left_to_the_llm_repair(text: str) -> None:
    assert parse_json(text) is None


def test_a_json_string_holding_the_object_is_decoded_and_says_so() -> None:
    outcome = parse_json(json.dumps(json.dumps({"goal": "g", "steps": []})))

    assert outcome is not None and outcome.value == {"goal": "g", "steps": []}
    assert outcome.changes == ["decoded the answer from the JSON string it was written as"]
