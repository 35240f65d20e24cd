"""A step whose LLM call fails ends `failed`, never `running`: in the result, the last cycle record and run_end.

The plan is s1 (calculator, no LLM call) then s2 (agent: llm). s2 is marked running before its reasoning call, so
every way that call can end the run must leave s2 failed wherever the run reports it.
"""

from __future__ import annotations

from typing import Any

import pytest

from aeon.application.errors import LLMRefused, LLMTruncated
from aeon.application.llm.accounting import DEFAULT_MAX_TOKENS
from aeon.domain.ledger import estimate_prompt_tokens
from aeon.domain.llm import Usage

from harness import SUM_STEP, FailingLLM, FinishedRun, plan_json, run
from multipass import first, profile

REASON = {"step_id": "s2", "description": "State the sum from s1", "agent": "llm"}
PLAN = plan_json(SUM_STEP, REASON)
UNAVAILABLE = {"error": "unavailable"}


def statuses(steps: list[dict[str, Any]]) -> dict[str, str]:
    return {s["step_id"]: s["status"] for s in steps}


def assert_s2_failed_everywhere(r: FinishedRun) -> dict[str, Any]:
    """s2 is failed in the result (outputs and plan) and in the last cycle record; s1 keeps its result."""
    res = r.doc
    assert {k: v["status"] for k, v in res["outputs"].items()} == {"s1": "complete", "s2": "failed"}
    assert res["outputs"]["s1"]["output"] == 15
    assert statuses(res["plan"]["steps"]) == {"s1": "complete", "s2": "failed"}
    last = r.cycles()[-1]
    assert (last["step_id"], last["step_number"]) == ("s2", 2)
    assert statuses(last["plan_state"]["steps"]) == {"s1": "complete", "s2": "failed"}
    assert last["errors"], "the cycle that ended the run says why"
    end = r.records()[-1]
    assert end["event"] == "run_end"
    return end


@pytest.mark.parametrize(
    ("script", "code"),
    [
        ([PLAN, {"error": "rejected"}], "AEON.PHASE_TRANSITION.PROVIDER_REJECTED"),
        ([PLAN, {"error": "invalid"}], "AEON.PHASE_TRANSITION.PROVIDER_REJECTED"),
        ([PLAN, UNAVAILABLE, UNAVAILABLE], "AEON.PHASE_TRANSITION.PROVIDER_UNAVAILABLE"),
        ([PLAN], "AEON.PHASE_TRANSITION.PROVIDER_REJECTED"),  # the script runs out at s2's call
    ],
    ids=["rejected", "bad-response", "unavailable-both-rounds", "script-exhausted"],
)
def test_a_step_whose_llm_call_fails_ends_failed_in_the_result_and_the_last_records(tmp_path, script, code):
    r = run(tmp_path, script)
    assert r.result.status == "error"
    assert r.result.error is not None and r.result.error.code == code
    assert (r.result.error.step_id, r.result.error.phase, r.result.error.affected_component) == ("s2", "C", "executor")
    end = assert_s2_failed_everywhere(r)
    assert end["status"] == "error"
    assert end["error"]["code"] == code and end["error"]["step_id"] == "s2"


@pytest.mark.parametrize(
    "failure",
    [
        LLMTruncated(
            "answer truncated at the token limit (max_tokens=64)", usage=Usage(prompt_tokens=9, completion_tokens=64)
        ),
        LLMRefused("model refused to answer (stop_reason=refusal)"),
    ],
    ids=["truncated", "refused"],
)
def test_a_reasoning_answer_cut_off_or_refused_fails_the_step_not_leaves_it_running(tmp_path, failure):
    r = run(tmp_path, [], llm=FailingLLM([PLAN], {2: failure}))
    assert r.result.status == "error" and r.result.error is not None
    assert r.result.error.code == "AEON.PHASE_TRANSITION.PROVIDER_REJECTED" and r.result.error.step_id == "s2"
    assert assert_s2_failed_everywhere(r)["status"] == "error"


def test_in_a_multi_pass_run_the_step_fails_and_the_run_ends_without_another_pass(tmp_path):
    r = run(tmp_path, [first(profile(3), PLAN), {"error": "rejected"}], evaluate=True, ttl=3)
    assert r.result.status == "error" and r.result.converged is False
    assert len(r.llm.requests) == 2  # no evaluation, no refinement after the failed step
    end = assert_s2_failed_everywhere(r)
    assert end["status"] == "error" and end["error"]["pass_number"] == 1


def test_a_token_cap_the_reasoning_call_could_cross_expires_the_run_with_the_step_failed(tmp_path):
    # The cap is the plan call's worst case (estimated prompt + max_tokens): the plan call fits; s2's reasoning call,
    # on top of what the plan spent, could cross it, so it is not sent and the run expires with s2 failed.
    first = run(tmp_path / "uncapped", [PLAN, "x" * 2000])
    plan_call = first.llm.requests[0].messages
    cap = estimate_prompt_tokens([m.content for m in plan_call]) + DEFAULT_MAX_TOKENS
    r = run(tmp_path, [PLAN, "x" * 2000], max_tokens=cap)
    assert len(r.llm.requests) == 1  # the reasoning call was never sent
    res = r.result
    assert res.status == "ttl_expired" and res.ttl_expiration is not None
    t = r.doc["ttl_expiration"]
    assert (t["cap"], t["expiration_type"], t["phase"]) == ("max_tokens", "mid_phase", "C")
    assert {k: v["status"] for k, v in t["execution_results"].items()} == {"s1": "complete", "s2": "failed"}
    assert statuses(t["plan_state"]["steps"]) == {"s1": "complete", "s2": "failed"}
    assert t["partial_result"] is not None
    assert {k: v["status"] for k, v in t["partial_result"]["execution_results"].items()} == {
        "s1": "complete",
        "s2": "failed",
    }
    end = assert_s2_failed_everywhere(r)
    assert end["status"] == "ttl_expired" and end["expired_cap"] == "max_tokens"
    [expired] = [x for x in r.records() if x["event"] == "ttl_expired"]
    assert statuses(expired["plan_state"]["steps"]) == {"s1": "complete", "s2": "failed"}


def test_an_interrupt_during_the_reasoning_call_fails_the_step_in_the_result(tmp_path):
    r = run(tmp_path, [], llm=FailingLLM([PLAN], {2: "cancel"}))
    res = r.doc
    assert res["status"] == "interrupted"
    assert {k: v["status"] for k, v in res["outputs"].items()} == {"s1": "complete", "s2": "failed"}
    assert statuses(res["plan"]["steps"]) == {"s1": "complete", "s2": "failed"}
    end = r.records()[-1]
    assert end["event"] == "run_end" and end["status"] == "interrupted"


def test_an_interrupt_during_the_reasoning_call_leaves_the_step_failed_in_the_log(tmp_path):
    r = run(tmp_path, [], llm=FailingLLM([PLAN], {2: "cancel"}))
    last = r.cycles()[-1]
    assert statuses(last["plan_state"]["steps"]) == {"s1": "complete", "s2": "failed"}
    assert "interrupted" in last["errors"]
