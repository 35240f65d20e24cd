"""ExecutionPass consistency (05 US5) and the ExecutionHistory of a real multi-pass run (02 US6)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
import pytest

from aeon.domain.evaluation import (
    ArtifactType,
    ConvergenceAssessment,
    IssueType,
    SemanticValidationReport,
    Severity,
    ValidationIssue,
)
from aeon.domain.history import Evaluation, ExecutionHistory, ExecutionPass, StepResult, TimingInformation
from aeon.domain.phases import PassPhase
from aeon.domain.plan import ExecutionMode, Plan, PlanStep, StepStatus

from harness import FinishedRun, document, run
from multipass import SUM_PLAN, first, profile, two_pass_script, verdict

START = "2026-01-01T10:00:00+00:00"
END = "2026-01-01T10:00:02.500000+00:00"
PLAN = Plan(goal="g", steps=[PlanStep(step_id="s1", description="d")])
DONE = {"s1": StepResult(status=StepStatus.COMPLETE, output=15, mode=ExecutionMode.TOOL, errors=[])}


def evaluation(*pinned_to: str) -> Evaluation:
    issues = [
        ValidationIssue(
            issue_id=f"V{n}",
            type=IssueType.CONSISTENCY,
            severity=Severity.LOW,
            description="x",
            location={"step_id": sid},
        )
        for n, sid in enumerate(pinned_to, 1)
    ]
    report = SemanticValidationReport.build("v", ArtifactType.CROSS_PHASE, issues)
    done = ConvergenceAssessment(converged=True, reason_codes=["complete"], scores={}, explanation="ok")
    return Evaluation(validation_report=report, convergence=done)


def xpass(**fields: Any) -> ExecutionPass:
    base: dict[str, Any] = {
        "pass_number": 1,
        "phase": PassPhase.EXECUTE,
        "plan_state": PLAN,
        "ttl_remaining": 2,
        "timing_information": TimingInformation(start_time=START, end_time=END, duration_seconds=2.5),
        "execution_results": DONE,
        "evaluation_results": evaluation(),
    }
    return ExecutionPass(**{**base, **fields})


# -- entry and exit checks ---------------------------------------------------------------------------------------------
def test_a_complete_pass_has_no_entry_or_exit_problems():
    p = xpass()
    assert p.entry_problems() == [] and p.exit_problems() == []


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"timing_information": TimingInformation(start_time="")}, "start_time is empty"),
        ({"ttl_remaining": -1}, "ttl_remaining is negative"),
        ({"pass_number": -1}, "pass_number is negative"),
        ({"plan_state": Plan(goal="g")}, "plan_state is empty"),
    ],
)
def test_entry_problems_name_the_missing_or_invalid_field(fields, needle):
    problems = xpass(**fields).entry_problems()
    assert len(problems) == 1 and needle in problems[0]


def test_ttl_zero_at_entry_is_not_an_entry_problem():
    assert xpass(ttl_remaining=0).entry_problems() == []


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"timing_information": TimingInformation(start_time=START)}, "end_time/duration_seconds missing"),
        (
            {"timing_information": TimingInformation(start_time=START, end_time=END, duration_seconds=None)},
            "end_time/duration_seconds missing",
        ),
        (
            {"timing_information": TimingInformation(start_time=END, end_time=START, duration_seconds=0.0)},
            "end_time is before start_time",
        ),
        ({"execution_results": {}}, "execution_results missing"),
        ({"evaluation_results": evaluation("s9")}, "evaluation issues name steps the pass does not have: ['s9']"),
    ],
    ids=["no-end", "no-duration", "end-before-start", "no-results", "evaluation-conflicts-with-execution"],
)
def test_exit_problems_name_each_broken_invariant(fields, needle):
    problems = xpass(**fields).exit_problems()
    assert len(problems) == 1 and needle in problems[0], problems


@pytest.mark.parametrize(
    "results",
    [{"s1": {"output": 15}}, {"s1": 15}],
    ids=["no-status", "bare-output"],
)
def test_results_without_a_status_cannot_even_be_recorded(results):
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({**msgspec.to_builtins(xpass()), "execution_results": results}, ExecutionPass)


def test_a_pass_without_evaluation_is_consistent_when_evaluation_is_off():
    assert xpass(evaluation_results=None).exit_problems() == []


def test_end_before_start_is_found_across_utc_offsets():
    timing = TimingInformation(
        start_time="2026-01-01T10:00:00+00:00", end_time="2026-01-01T10:30:00+01:00", duration_seconds=0.0
    )
    assert any("before start_time" in p for p in xpass(timing_information=timing).exit_problems())


# -- a real two-pass run ----------------------------------------------------------------------------------------------
@pytest.fixture
def two(tmp_path) -> FinishedRun:
    r = run(tmp_path, two_pass_script(), evaluate=True, ttl=3)
    assert r.result.status == "completed" and r.result.passes == 2
    return r


def _iso(text: str) -> datetime:
    parsed = datetime.fromisoformat(text)
    assert parsed.tzinfo is not None, text
    return parsed


def test_passes_are_numbered_from_1_and_every_pass_passes_its_own_checks(two):
    passes = two.result.history.passes
    assert [p.pass_number for p in passes] == [1, 2]
    assert [p.phase for p in passes] == [PassPhase.EXECUTE, PassPhase.RE_EXECUTE]
    for p in passes:
        assert p.entry_problems() == [] and p.exit_problems() == []


def test_every_pass_has_iso_timing_with_a_non_negative_duration(two):
    for p in two.result.history.passes:
        t = p.timing_information
        start, end = _iso(t.start_time), _iso(t.end_time)
        assert end >= start
        assert t.duration_seconds is not None and t.duration_seconds >= 0


def test_a_pass_spans_all_its_phases_and_its_duration_is_end_minus_start(two):
    for p in two.result.history.passes:
        t = p.timing_information
        start, end = _iso(t.start_time), _iso(t.end_time)
        assert start <= _iso(p.phases[0].start_time) and _iso(p.phases[-1].end_time) <= end
        assert t.duration_seconds is not None
        assert t.duration_seconds <= (end - start).total_seconds() + 1e-9


def test_each_pass_lists_its_phases_with_timings(two):
    first, second = two.result.history.passes
    assert [ph.phase for ph in first.phases] == ["A", "B", "C", "D"]
    assert [ph.phase for ph in second.phases] == ["B", "C", "D"]
    for p in (first, second):
        for ph in p.phases:
            assert ph.outcome == "success" and ph.duration_seconds >= 0
            assert _iso(ph.end_time) >= _iso(ph.start_time)
        starts = [_iso(ph.start_time) for ph in p.phases]
        assert starts == sorted(starts)
    assert _iso(first.phases[-1].end_time) <= _iso(second.phases[0].start_time)


def test_execution_results_carry_a_status_for_every_step_run_so_far(two):
    first, second = two.result.history.passes
    assert msgspec.to_builtins(first.execution_results) == {
        "s1": {"status": "complete", "output": 15, "mode": "tool", "errors": []}
    }
    assert {sid: r.status for sid, r in second.execution_results.items()} == {"s1": "complete", "s2": "complete"}
    assert second.execution_results["s2"].output == "The sum is 15."


def test_evaluation_results_hold_the_validation_report_and_the_convergence_assessment(two):
    first, second = two.result.history.passes
    for p, converged in ((first, False), (second, True)):
        ev = msgspec.to_builtins(p.evaluation_results)
        assert set(ev) == {"validation_report", "convergence"}
        assert ev["convergence"]["converged"] is converged
        assert {"completeness_score", "coherence_score"} <= ev["convergence"]["scores"].keys()
        assert "issues" in ev["validation_report"]


def test_refinement_changes_are_recorded_on_the_pass_that_refined(two):
    first, second = two.result.history.passes
    (change,) = first.refinement_changes
    assert change.applied is True and change.action.action_type == "ADD"
    assert second.refinement_changes == []
    # the plan snapshot of pass 1 is taken at its start; its final state carries the added step
    assert [s.step_id for s in first.plan_state.steps] == ["s1"]
    assert [s.step_id for s in first.final_plan_state.steps] == ["s1", "s2"]
    assert [s.step_id for s in second.plan_state.steps] == ["s1", "s2"]


def test_llm_usage_per_pass_adds_up_to_the_run(two):
    passes = two.result.history.passes
    assert [p.llm_usage.calls for p in passes] == [3, 2]  # pass 1: profile and plan, evaluation, refinement
    for key, budget_key in (("calls", "llm_calls"), ("prompt_tokens", "prompt_tokens")):
        assert sum(getattr(p.llm_usage, key) for p in passes) == document(two.result)["budget"][budget_key]


def test_ttl_remaining_and_depth_are_recorded_per_pass(two):
    first, second = two.result.history.passes
    assert (first.ttl_remaining, second.ttl_remaining) == (3, 2)
    assert first.adaptive_depth.decision == "continue" and second.adaptive_depth.decision == "halt"
    assert first.adaptive_depth.adjustment_reason and second.task_profile.reasoning_depth == 3


def test_overall_statistics_match_the_passes(two):
    h: ExecutionHistory = two.result.history
    stats = h.overall_statistics
    assert stats.total_passes == len(h.passes) == 2
    assert stats.total_refinements == 1
    assert stats.convergence_achieved is True and h.final_result.converged is True
    assert stats.llm_calls == 5 and stats.total_time_seconds >= 0
    assert h.execution_id == two.result.correlation_id and h.task_input == "calculate the sum of 5 and 10"
    assert h.configuration.ttl == 3 and h.final_result.output == "The sum is 15."


def test_a_run_that_never_converges_counts_no_convergence_and_no_applied_refinement(tmp_path):
    script = [first(profile(3), SUM_PLAN), verdict(False), "junk", "junk", "junk", verdict(False)]
    r = run(tmp_path, script, evaluate=True, ttl=2)
    h = r.result.history
    assert r.result.status == "ttl_expired"
    assert h.overall_statistics.total_passes == len(h.passes) == 2
    assert h.overall_statistics.total_refinements == 0
    assert h.overall_statistics.convergence_achieved is False


def test_a_pass_that_breaks_its_exit_checks_aborts_the_run_without_retry(tmp_path, monkeypatch):
    monkeypatch.setattr(ExecutionPass, "exit_problems", lambda self: ["execution_results[s1] has no status"])
    r = run(tmp_path, [first(profile(3), SUM_PLAN), verdict(True)], evaluate=True, ttl=3)
    res = r.result
    assert res.status == "error" and res.error is not None
    assert res.error.code == "AEON.PHASE_TRANSITION.PASS_CONSISTENCY" and res.error.severity == "CRITICAL"
    assert "has no status" in res.error.message
    recs = r.records()
    assert [x for x in recs if x["event"] == "phase_retry"] == []
    assert recs[-1]["event"] == "run_end"
    assert res.history.passes == []  # an inconsistent pass is not recorded as if it were fine


def test_a_step_held_back_only_by_its_dependencies_is_known_by_its_state_not_by_its_note_wording():
    from aeon.domain.plan import PlanStep

    step = PlanStep(step_id="s2", description="use s1", dependencies=["s1"])
    step.block(["s1"])
    assert step.held_only_by_dependencies()
    step.errors = ["en attente de s1"]  # the note's wording (a redacted or translated record) does not matter
    assert step.held_only_by_dependencies()
    step.errors.append("tool 'x' failed")  # a second reason: not held only by dependencies
    assert not step.held_only_by_dependencies()
