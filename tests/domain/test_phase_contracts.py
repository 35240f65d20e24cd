"""Phase-transition contracts (05 US1): the contract table, and each failure in a real scripted run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from aeon.domain.phases import Component, Phase, PhaseTransitionError, Severity, Transition
from aeon.domain.plan import Plan, PlanStep
from aeon.domain.transitions import CONTRACTS

from harness import FinishedRun, plan_json, run
from multipass import SUM_PLAN, first, profile, two_pass_script, verdict

ERROR_FIELDS = ("error_code", "severity", "affected_component", "failure_condition", "correlation_id", "phase")

# A profile answer that parses but misses four of the six required dimensions.
INCOMPLETE_PROFILE = json.dumps({"reasoning_depth": 3, "raw_inference": "hard to say"})
LLM_PLAN = plan_json({"step_id": "s1", "description": "State the sum of 5 and 10", "agent": "llm"})
UNAVAILABLE = {"error": "unavailable"}
BAD_ISSUE_TYPE = json.dumps(
    {
        **json.loads(verdict(True)),
        "issues": [{"type": "vibes", "severity": "HIGH", "step_id": "s1", "description": "odd", "repair": "none"}],
    }
)


def events(r: FinishedRun, name: str) -> list[dict[str, Any]]:
    return [x for x in r.records() if x["event"] == name]


def entered(r: FinishedRun) -> list[str]:
    return [x["phase"] for x in events(r, "phase_entry")]


def assert_structured_abort(r: FinishedRun, code: str, *, phase: str, component: str, retried: bool) -> dict[str, Any]:
    """The run ended in error with a PHASE_TRANSITION code, one phase_error record, a failing exit, an intact log."""
    res = r.result
    assert res.status == "error"
    assert res.error is not None and res.error.code == f"AEON.PHASE_TRANSITION.{code}"
    assert res.error.phase == phase and res.error.affected_component == component
    assert res.error.failure_condition and res.error.correlation_id == res.correlation_id
    (err,) = events(r, "phase_error")
    for key in ERROR_FIELDS:
        assert err[key], key
    assert err["error_code"] == res.error.code and err["severity"] == res.error.severity
    assert err["correlation_id"] == res.correlation_id
    assert (err["phase"], err["pass_number"], err["affected_component"]) == (phase, 1, component)
    retries = [x for x in events(r, "phase_retry") if x.get("error_code") == res.error.code]
    assert len(retries) == (1 if retried else 0)
    exits = events(r, "phase_exit")
    assert exits[-1]["phase"] == phase and exits[-1]["outcome"] == "failure"
    assert all(x["outcome"] == "success" for x in exits[:-1])
    assert len(exits) == len(events(r, "phase_entry"))
    assert r.records()[-1]["event"] == "run_end"
    return err


# -- the contract table ---------------------------------------------------------------------------------------------
def test_there_is_one_contract_per_transition_of_the_four_phase_loop():
    assert {name: (c.source, c.targets) for name, c in CONTRACTS.items()} == {
        "A->B": (Phase.A, (Phase.B,)),
        "B->C": (Phase.B, (Phase.C,)),
        "C->D": (Phase.C, (Phase.D,)),
        "D->A/B": (Phase.D, (Phase.A, Phase.B)),
    }


@pytest.mark.parametrize(
    ("name", "inputs", "outputs"),
    [
        ("A->B", {"task_profile", "initial_plan", "ttl_remaining"}, {"refined_plan"}),
        ("B->C", {"refined_plan"}, {"execution_results"}),
        ("C->D", {"execution_results", "evaluation_results"}, {"depth_decision"}),
        ("D->A/B", {"ttl_remaining", "depth_decision"}, {"next_pass_state"}),
    ],
)
def test_each_contract_lists_the_required_inputs_and_guaranteed_outputs(name, inputs, outputs):
    c = CONTRACTS[name]
    assert set(c.required_inputs) == inputs
    assert set(c.guaranteed_outputs) == outputs


@pytest.mark.parametrize("name", list(CONTRACTS))
def test_each_contract_carries_the_five_transition_invariants(name):
    text = " | ".join(CONTRACTS[name].invariants)
    for needle in ("correlation_id unchanged", "execution_start_timestamp unchanged", "TTL_remaining > 0", "plan"):
        assert needle in text
    assert "memory" in text


@pytest.mark.parametrize(
    ("name", "code", "retryable"),
    [
        ("A->B", "INCOMPLETE_PROFILE", False),
        ("A->B", "MALFORMED_PLAN", True),  # a JSON parsing error
        ("A->B", "INVALID_PLAN_STRUCTURE", False),
        ("B->C", "MISSING_STEPS", False),
        ("B->C", "INVALID_FRAGMENT_FIELDS", True),  # missing required fields
        ("B->C", "INVALID_FRAGMENT_STRUCTURE", False),
        ("C->D", "MALFORMED_EVALUATION", True),
        ("C->D", "INVALID_EVALUATION_STRUCTURE", False),
        ("D->A/B", "TTL_EXHAUSTED", False),
        ("D->A/B", "INVALID_DEPTH_TRANSITION", False),
    ],
)
def test_failure_conditions_are_enumerated_and_classified_as_05_says(name, code, retryable):
    condition = CONTRACTS[name].failure(code)
    assert condition.retryable is retryable
    assert condition.description.strip()


@pytest.mark.parametrize("name", list(CONTRACTS))
def test_context_and_pass_consistency_failures_are_never_retried_anywhere(name):
    c = CONTRACTS[name]
    for code in ("CONTEXT_PROPAGATION", "PASS_CONSISTENCY"):
        assert c.failure(code).retryable is False
        assert c.failure(code).severity is Severity.CRITICAL


def test_an_unknown_failure_code_is_not_silently_accepted():
    with pytest.raises(KeyError, match="NO_SUCH_CODE"):
        CONTRACTS["A->B"].failure("NO_SUCH_CODE")


@pytest.mark.parametrize("blank", [None, "", [], {}])
def test_a_contract_names_every_blank_required_input(blank):
    c = CONTRACTS["A->B"]
    good = {"task_profile": {"reasoning_depth": 3}, "initial_plan": {"goal": "g", "steps": []}, "ttl_remaining": 2}
    assert c.missing_inputs(good) == []
    assert c.missing_inputs({**good, "task_profile": blank}) == ["task_profile"]
    assert c.missing_inputs({"ttl_remaining": 0}) == ["task_profile", "initial_plan"]  # 0 is a value, not a blank
    assert c.missing_outputs({}) == ["refined_plan"]


def test_a_phase_transition_error_has_the_structured_error_shape():
    err = PhaseTransitionError(
        CONTRACTS["C->D"].failure("MALFORMED_EVALUATION"),
        detail="issues missing",
        transition=Transition.C_TO_D,
        phase=Phase.C,
        pass_number=2,
        correlation_id="cid",
        affected_component=Component.EVALUATOR,
    )
    assert err.code == "AEON.PHASE_TRANSITION.MALFORMED_EVALUATION" and err.retryable is True
    rec = err.record()
    assert {k: rec[k] for k in (*ERROR_FIELDS, "pass_number", "retryable")} == {
        "error_code": "AEON.PHASE_TRANSITION.MALFORMED_EVALUATION",
        "severity": "ERROR",
        "affected_component": "evaluator",
        "failure_condition": CONTRACTS["C->D"].failure("MALFORMED_EVALUATION").description,
        "correlation_id": "cid",
        "phase": "C",
        "pass_number": 2,
        "retryable": True,
    }


# -- phase A ----------------------------------------------------------------------------------------------------------
def test_an_incomplete_profile_aborts_phase_a_without_a_phase_retry(tmp_path):
    # the profile half of phase A's one answer stays broken through the supervisor's two repairs (the plan half is
    # fine): 1 call + 2 repair calls, then abort
    r = run(tmp_path, [first(INCOMPLETE_PROFILE, SUM_PLAN)] * 6, evaluate=True, ttl=3)
    err = assert_structured_abort(r, "INCOMPLETE_PROFILE", phase="A", component="profiler", retried=False)
    assert err["retryable"] is False and err["severity"] == "ERROR"
    assert len(r.llm.requests) == 3  # no second attempt of the phase
    assert entered(r) == ["A"]
    assert r.result.passes == 0 and r.doc["plan"] is None


def test_a_plan_answer_that_is_not_json_is_retried_once_and_the_run_goes_on(tmp_path):
    script = ["no plan here", "still no plan", "nope", first(profile(3), SUM_PLAN), verdict(True)]
    r = run(tmp_path, script, evaluate=True, ttl=3)
    assert r.result.status == "completed" and r.result.converged is True
    (retry,) = events(r, "phase_retry")
    assert retry["error_code"] == "AEON.PHASE_TRANSITION.MALFORMED_PLAN" and retry["phase"] == "A"
    assert retry["retryable"] is True and retry["affected_component"] == "planner"
    assert events(r, "phase_error") == []
    assert len(r.llm.requests) == 5  # profile and plan + 2 repairs, the phase retry's call, the evaluation


def test_a_plan_answer_that_stays_unparseable_aborts_after_exactly_one_phase_retry(tmp_path):
    r = run(tmp_path, ["no plan here"] * 8, evaluate=True, ttl=3)
    assert_structured_abort(r, "MALFORMED_PLAN", phase="A", component="planner", retried=True)
    assert len(r.llm.requests) == 3 + 3  # profile and plan + 2 repairs, twice


def test_a_structurally_invalid_plan_is_not_retried(tmp_path):
    no_steps = json.dumps({"goal": "calculate the sum of 5 and 10", "steps": []})
    r = run(tmp_path, [first(profile(3), no_steps)] * 8, evaluate=True, ttl=3)
    assert_structured_abort(r, "INVALID_PLAN_STRUCTURE", phase="A", component="planner", retried=False)
    assert len(r.llm.requests) == 3


# -- phase B ----------------------------------------------------------------------------------------------------------
def test_a_plan_with_no_steps_fails_phase_b_with_missing_steps(tmp_path):
    r = run(tmp_path, [profile(3)], evaluate=True, ttl=3, plan=Plan(goal="calculate the sum", steps=[]))
    err = assert_structured_abort(r, "MISSING_STEPS", phase="B", component="validator", retried=False)
    assert err["retryable"] is False
    assert entered(r) == ["A", "B"]  # phase C never starts
    assert len(r.llm.requests) == 1


@pytest.mark.parametrize(
    "step",
    [PlanStep(step_id="s1", description=""), PlanStep(step_id="", description="Add 5 and 10")],
    ids=["no-description", "no-step-id"],
)
def test_an_invalid_plan_fragment_aborts_phase_b_and_is_retried_only_if_its_condition_is_retryable(tmp_path, step):
    r = run(tmp_path, [profile(3), verdict(True)], evaluate=True, ttl=3, plan=Plan(goal="g", steps=[step]))
    res = r.result
    assert res.status == "error" and res.error is not None
    code = res.error.code.removeprefix("AEON.PHASE_TRANSITION.")
    assert code in ("INVALID_FRAGMENT_FIELDS", "INVALID_FRAGMENT_STRUCTURE")
    retryable = CONTRACTS["B->C"].failure(code).retryable
    assert_structured_abort(r, code, phase="B", component="validator", retried=retryable)


# -- phase C ----------------------------------------------------------------------------------------------------------
def test_a_malformed_validation_answer_is_retried_once_then_the_pass_goes_on(tmp_path):
    script = [first(profile(3), SUM_PLAN), "looks fine", "looks fine", "looks fine", verdict(True)]
    r = run(tmp_path, script, evaluate=True, ttl=3)
    assert r.result.status == "completed" and r.result.converged is True
    (retry,) = events(r, "phase_retry")
    assert retry["error_code"] == "AEON.PHASE_TRANSITION.MALFORMED_EVALUATION"
    assert (retry["phase"], retry["affected_component"]) == ("C", "evaluator")
    assert [x["outcome"] for x in events(r, "phase_exit")] == ["success"] * 4


def test_a_validation_answer_missing_its_issues_list_aborts_after_one_retry(tmp_path):
    missing = json.dumps({k: v for k, v in json.loads(verdict(True)).items() if k != "issues"})
    r = run(tmp_path, [first(profile(3), SUM_PLAN), *[missing] * 6], evaluate=True, ttl=3)
    assert_structured_abort(r, "MALFORMED_EVALUATION", phase="C", component="evaluator", retried=True)
    assert len(r.llm.requests) == 1 + 3 + 3  # phase A's one call, then the evaluation + 2 repairs, twice
    assert entered(r) == ["A", "B", "C"]


def test_a_structurally_invalid_validation_answer_aborts_without_retry(tmp_path):
    r = run(tmp_path, [first(profile(3), SUM_PLAN), *[BAD_ISSUE_TYPE] * 6], evaluate=True, ttl=3)
    assert_structured_abort(r, "INVALID_EVALUATION_STRUCTURE", phase="C", component="evaluator", retried=False)
    assert len(r.llm.requests) == 1 + 3


# -- provider failures -------------------------------------------------------------------------------------------------
def test_a_provider_unavailable_twice_aborts_with_provider_unavailable(tmp_path):
    r = run(tmp_path, [UNAVAILABLE, UNAVAILABLE, first(profile(3), SUM_PLAN)], evaluate=True, ttl=3)
    # phase A's one call asks for the profile and the plan; its failures other than an incomplete profile are the
    # planner's
    assert_structured_abort(r, "PROVIDER_UNAVAILABLE", phase="A", component="planner", retried=False)
    assert len(r.llm.requests) == 2  # the call and its one retry; the phase is not run again
    assert [x["error_code"] for x in events(r, "llm_error")] == ["AEON.LLM.UNAVAILABLE"] * 2


def test_a_provider_unavailable_once_is_retried_and_the_run_completes(tmp_path):
    r = run(tmp_path, [UNAVAILABLE, first(profile(3), SUM_PLAN), verdict(True)], evaluate=True, ttl=3)
    assert r.result.status == "completed" and r.result.converged is True
    assert len(events(r, "llm_error")) == 1 and events(r, "phase_error") == []


def test_a_rejected_request_is_not_retried(tmp_path):
    r = run(tmp_path, [first(profile(3), SUM_PLAN), {"error": "rejected"}, verdict(True)], evaluate=True, ttl=3)
    assert_structured_abort(r, "PROVIDER_REJECTED", phase="C", component="evaluator", retried=False)
    assert len(r.llm.requests) == 2


def test_a_provider_unavailable_during_evaluation_is_a_phase_c_failure(tmp_path):
    r = run(tmp_path, [first(profile(3), SUM_PLAN), UNAVAILABLE, UNAVAILABLE], evaluate=True, ttl=3)
    assert_structured_abort(r, "PROVIDER_UNAVAILABLE", phase="C", component="evaluator", retried=False)


@pytest.mark.parametrize(
    "script",
    [
        [first(profile(3), LLM_PLAN), UNAVAILABLE, UNAVAILABLE],  # C1: the reasoning step
        [first(profile(3), SUM_PLAN), verdict(False), UNAVAILABLE, UNAVAILABLE],  # C3: the refiner
    ],
    ids=["C1-execute", "C3-refine"],
)
def test_a_provider_unavailable_while_executing_or_refining_is_a_structured_phase_c_failure(tmp_path, script):
    r = run(tmp_path, script, evaluate=True, ttl=3)
    assert r.result.error is not None
    assert r.result.error.code == "AEON.PHASE_TRANSITION.PROVIDER_UNAVAILABLE"
    assert len(events(r, "phase_error")) == 1


# -- phase D and the next cycle ----------------------------------------------------------------------------------------
def test_phase_d_hands_the_next_cycle_a_decremented_ttl_and_its_decision(tmp_path):
    r = run(tmp_path, two_pass_script(), evaluate=True, ttl=3)
    decisions = [x["decision"] for x in events(r, "depth_decision")]
    assert decisions == ["continue", "halt"]
    d_exit, b_entry = [x for x in r.records() if x["event"] in ("phase_exit", "phase_entry")][7:9]
    assert (d_exit["phase"], d_exit["pass_number"], b_entry["phase"], b_entry["pass_number"]) == ("D", 1, "B", 2)
    assert b_entry["ttl_snapshot"]["ttl_before"] == d_exit["ttl_snapshot"]["ttl_before"] - 1 > 0
    assert entered(r) == ["A", "B", "C", "D", "B", "C", "D"]
