"""Context propagation (05 US2): what every LLM call sees, and a broken context aborting the run."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest

from aeon.application.errors import ContextViolation
from aeon.application.llm.guard import ContextGuard
from aeon.domain.context import CONTEXT_SPEC, EvaluateInput, ExecuteInput, StageInput, context_violations
from aeon.domain.phases import Phase, Stage
from aeon.testing import new_run

from harness import FinishedRun, plan_json, run
from multipass import SUM_PLAN, first, profile, two_pass_script, verdict

REQUEST = "calculate the sum of 5 and 10"
LLM_PLAN = plan_json({"step_id": "s1", "description": "State the sum of 5 and 10", "agent": "llm"})
Seen = list[tuple[str, dict[str, Any]]]


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Seen:
    """(stage, context) of every context checked before an LLM call."""
    seen: Seen = []
    original = ContextGuard.check

    def spy(self: ContextGuard) -> None:
        seen.append((self.stage, dict(self.context)))
        original(self)

    monkeypatch.setattr(ContextGuard, "check", spy)
    return seen


@pytest.fixture
def entered(monkeypatch: pytest.MonkeyPatch) -> Seen:
    """(stage, context) of every stage's context set, including B and D, which make no LLM call."""
    seen: Seen = []
    original = ContextGuard.enter

    def spy(self: ContextGuard, given: StageInput) -> None:
        original(self, given)
        seen.append((self.stage, dict(self.context)))

    monkeypatch.setattr(ContextGuard, "enter", spy)
    return seen


@pytest.fixture
def two_passes(tmp_path, checked: Seen, entered: Seen) -> tuple[FinishedRun, Seen, Seen]:
    r = run(tmp_path, two_pass_script(), evaluate=True, ttl=3, request=REQUEST)
    assert r.result.status == "completed" and r.result.passes == 2
    return r, checked, entered


# -- the propagation table itself -------------------------------------------------------------------------------------
BASE = {"request", "pass_number", "phase", "ttl_remaining", "correlation_id", "execution_start_timestamp"}


@pytest.mark.parametrize(
    ("key", "phase", "extra", "prohibited"),
    [
        ("A", "A", set(), {"execution_results", "evaluation_results", "refinement_changes"}),
        ("B", "B", {"task_profile", "initial_plan"}, {"execution_results"}),
        ("C1", "C", {"task_profile", "refined_plan"}, {"evaluation_results", "refinement_changes"}),
        ("C2", "C", {"task_profile", "plan_state", "execution_results"}, {"refinement_changes"}),
        ("C3", "C", {"task_profile", "plan_state", "execution_results", "evaluation_results"}, set()),
        ("D", "D", {"task_profile", "plan_state", "evaluation_results"}, {"initial_plan", "refined_plan"}),
    ],
)
def test_the_propagation_table_matches_the_spec(key, phase, extra, prohibited):
    rule = CONTEXT_SPEC[key]
    assert rule.phase is Phase(phase)
    assert set(rule.must_have) == BASE | extra
    assert set(rule.prohibited) == prohibited
    assert set(rule.must_pass_unchanged) == {"correlation_id", "execution_start_timestamp"}


def good_context(key: str) -> dict[str, Any]:
    rule = CONTEXT_SPEC[key]
    ctx: dict[str, Any] = {k: {"x": 1} for k in rule.must_have}
    ctx.update(
        request=REQUEST,
        pass_number=0,
        phase=rule.phase.value,
        ttl_remaining=2,
        correlation_id="c",
        execution_start_timestamp="t",
    )
    return ctx


ANCHOR = {"correlation_id": "c", "execution_start_timestamp": "t"}


@pytest.mark.parametrize("key", list(CONTEXT_SPEC))
def test_a_complete_context_has_no_violations_even_at_pass_number_0(key):
    assert context_violations(CONTEXT_SPEC[key], good_context(key), anchor=ANCHOR, request=REQUEST) == []


@pytest.mark.parametrize("key", list(CONTEXT_SPEC))
@pytest.mark.parametrize(
    "spoil", [lambda c, k: c.pop(k), lambda c, k: c.update({k: None}), lambda c, k: c.update({k: ""})]
)
def test_every_missing_null_or_empty_must_have_field_is_named(key, spoil: Callable[[dict[str, Any], str], Any]):
    rule = CONTEXT_SPEC[key]
    for field in rule.must_have:
        ctx = good_context(key)
        spoil(ctx, field)
        problems = context_violations(rule, ctx, anchor=ANCHOR, request=REQUEST)
        assert any(p.startswith(f"{field} is missing or empty") for p in problems), (field, problems)


@pytest.mark.parametrize("empty", [[], {}])
def test_an_empty_structured_field_counts_as_missing(empty):
    ctx = {**good_context("C2"), "execution_results": empty}
    assert context_violations(CONTEXT_SPEC["C2"], ctx, anchor=ANCHOR, request=REQUEST) == [
        "execution_results is missing or empty"
    ]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"correlation_id": "other"}, "correlation_id changed"),
        ({"execution_start_timestamp": "later"}, "execution_start_timestamp changed"),
        ({"request": "calculate the sum"}, "request is not the original input"),
        ({"phase": "D"}, "phase is 'D'"),
        ({"evaluation_results": None}, "evaluation_results is prohibited in phase C1"),  # present at all
    ],
)
def test_changed_invariants_a_transformed_request_a_wrong_phase_and_prohibited_fields_are_violations(change, needle):
    ctx = {**good_context("C1"), **change}
    problems = context_violations(CONTEXT_SPEC["C1"], ctx, anchor=ANCHOR, request=REQUEST)
    assert any(needle in p for p in problems), problems


# -- a real two-pass run ----------------------------------------------------------------------------------------------
def test_every_llm_call_is_preceded_by_a_context_check(two_passes):
    r, checked, _ = two_passes
    assert len(checked) == len(r.llm.requests) == 5
    assert {k for k, _ in checked} == {"A", "C1", "C2", "C3"}  # B and D make no LLM call


def test_correlation_id_and_start_timestamp_never_change_and_the_id_is_a_uuid4(two_passes):
    r, checked, entered = two_passes
    contexts = [c for _, c in checked + entered]
    assert {c["correlation_id"] for c in contexts} == {r.result.correlation_id}
    assert uuid.UUID(r.result.correlation_id).version == 4
    (stamp,) = {c["execution_start_timestamp"] for c in contexts}
    datetime.fromisoformat(stamp)


def test_every_context_carries_the_original_request_verbatim(two_passes):
    _, checked, entered = two_passes
    assert {c["request"] for _, c in checked + entered} == {REQUEST}


def test_every_context_satisfies_its_row_of_the_table(two_passes):
    _, checked, entered = two_passes
    anchor = {k: checked[0][1][k] for k in ("correlation_id", "execution_start_timestamp")}
    for key, ctx in checked + entered:
        assert ctx["phase"] == CONTEXT_SPEC[key].phase.value
        assert context_violations(CONTEXT_SPEC[key], ctx, anchor=anchor, request=REQUEST) == [], key
        assert ctx["ttl_remaining"] > 0


@pytest.mark.parametrize(
    ("key", "absent"),
    [
        ("A", ("execution_results", "evaluation_results", "refinement_changes")),
        ("B", ("execution_results",)),
        ("C1", ("evaluation_results", "refinement_changes")),
        ("C2", ("refinement_changes",)),
        ("D", ("initial_plan", "refined_plan")),
    ],
)
def test_prohibited_fields_never_reach_a_phase(two_passes, key, absent):
    _, checked, entered = two_passes
    contexts = [c for k, c in checked + entered if k == key]
    assert contexts, key
    for ctx in contexts:
        assert not set(absent) & set(ctx), (key, sorted(ctx))


def test_the_task_profile_reaches_every_call_after_profiling(two_passes):
    r, checked, entered = two_passes
    (first_key, first), *rest = checked
    assert first_key == "A" and "task_profile" not in first  # the profiling call itself
    expected = r.result.history.profiles[0]
    for key, ctx in rest + [e for e in entered if e[0] != "A"]:
        assert ctx["task_profile"] == expected, key


def test_pass_number_is_1_then_2_in_order(two_passes):
    _, checked, entered = two_passes
    numbers = [c["pass_number"] for _, c in checked]
    assert numbers == sorted(numbers) and numbers[0] == 1 and numbers[-1] == 2
    assert [(k, c["pass_number"]) for k, c in entered if k in ("B", "D")] == [("B", 1), ("D", 1), ("B", 2), ("D", 2)]


def test_what_one_phase_produces_is_what_the_next_one_sees(two_passes):
    r, checked, entered = two_passes
    first, second = r.result.history.passes
    c2 = [c for k, c in checked if k == "C2"]
    assert c2[0]["execution_results"] == first.execution_results
    assert c2[-1]["execution_results"] == second.execution_results
    (c3,) = [c for k, c in checked if k == "C3"]
    assert c3["evaluation_results"].convergence.converged is False
    # the step added by refinement in pass 1 is in the plan that phases B and C1 of pass 2 receive
    b2 = next(c for k, c in entered if k == "B" and c["pass_number"] == 2)
    c1 = next(c for k, c in checked if k == "C1")
    assert [s.step_id for s in b2["initial_plan"].steps] == ["s1", "s2"]
    assert [s.step_id for s in c1["refined_plan"].steps] == ["s1", "s2"] and c1["pass_number"] == 2
    # TTL seen by the phases of pass 2 is one cycle lower than in pass 1
    ttl = {c["pass_number"]: c["ttl_remaining"] for k, c in entered if k == "B"}
    assert ttl[2] == ttl[1] - 1


# -- a broken context aborts, never retried ----------------------------------------------------------------------------
def inject(monkeypatch: pytest.MonkeyPatch, key: str, change: dict[str, Any]) -> None:
    original = ContextGuard.enter

    def enter(self: ContextGuard, given: StageInput) -> None:
        original(self, given)
        if self.stage == key:
            self.context.update(change)

    monkeypatch.setattr(ContextGuard, "enter", enter)


def assert_context_abort(r: FinishedRun, *, phase: str) -> None:
    res = r.result
    assert res.status == "error" and res.error is not None
    assert res.error.code == "AEON.PHASE_TRANSITION.CONTEXT_PROPAGATION"
    assert res.error.severity == "CRITICAL" and res.error.phase == phase
    recs = r.records()
    assert [x for x in recs if x["event"] == "phase_retry"] == []
    (err,) = [x for x in recs if x["event"] == "phase_error"]
    assert err["error_code"] == res.error.code and err["retryable"] is False
    entries = [x for x in recs if x["event"] == "phase_entry"]
    exits = [x for x in recs if x["event"] == "phase_exit"]
    assert len(entries) == len(exits) and exits[-1]["outcome"] == "failure"
    assert recs[-1]["event"] == "run_end"


def test_a_changed_correlation_id_aborts_before_the_first_llm_call(tmp_path, monkeypatch):
    inject(monkeypatch, "A", {"correlation_id": str(uuid.uuid4())})
    r = run(tmp_path, [first(profile(3), SUM_PLAN), verdict(True)], evaluate=True, ttl=3)
    assert_context_abort(r, phase="A")
    assert r.llm.requests == []  # the call with a broken context was never sent


def test_a_prohibited_field_in_the_evaluation_context_aborts_phase_c(tmp_path, monkeypatch):
    inject(monkeypatch, "C2", {"refinement_changes": [{"applied": True}]})
    r = run(tmp_path, [first(profile(3), SUM_PLAN), verdict(True)], evaluate=True, ttl=3)
    assert_context_abort(r, phase="C")
    assert len(r.llm.requests) == 1  # phase A's one call; the evaluation was never sent


def test_a_null_task_profile_aborts_at_the_first_llm_call_that_needs_it(tmp_path, monkeypatch):
    original = ContextGuard.enter

    def enter(self: ContextGuard, given: StageInput) -> None:
        original(self, given)
        if "task_profile" in self.context:
            self.context["task_profile"] = None

    monkeypatch.setattr(ContextGuard, "enter", enter)
    r = run(tmp_path, [first(profile(3), SUM_PLAN), verdict(True)], evaluate=True, ttl=3)
    assert_context_abort(r, phase="C")
    assert len(r.llm.requests) == 1  # profile and plan in one call (phase A needs no profile); no evaluation sent


@pytest.mark.parametrize(
    ("key", "change", "script"),
    [
        ("C1", {"evaluation_results": {"converged": True}}, [first(profile(3), LLM_PLAN), "15", verdict(True)]),
        ("C3", {"correlation_id": "not-the-run"}, two_pass_script()),
    ],
    ids=["evaluation_results-in-C1", "correlation_id-changed-in-C3"],
)
def test_a_broken_context_while_executing_or_refining_aborts_as_context_propagation(
    tmp_path, monkeypatch, key, change, script
):
    inject(monkeypatch, key, change)
    r = run(tmp_path, script, evaluate=True, ttl=3)
    assert_context_abort(r, phase="C")


def test_the_guard_raises_a_context_violation_naming_the_empty_field():
    run = new_run(REQUEST, stage=Stage.EVALUATE)
    run.enter(EvaluateInput(task_profile="p", plan_state="plan", execution_results={}))  # type: ignore[arg-type]
    with pytest.raises(ContextViolation, match="execution_results is missing or empty"):
        run.guard.check()
    run.enter(EvaluateInput(task_profile="p", plan_state="plan", execution_results={"s1": "complete"}))  # type: ignore[arg-type]
    run.guard.check()


def test_state_brought_in_implicitly_is_a_violation():
    run = new_run(REQUEST, stage=Stage.EXECUTE)
    run.enter(ExecuteInput(task_profile="p", refined_plan="plan"))  # type: ignore[arg-type]
    run.guard.context["memory"] = {"step:s0": "from elsewhere"}  # no input type has such a field: forced in
    with pytest.raises(ContextViolation, match="memory is not a context field"):
        run.guard.check()
