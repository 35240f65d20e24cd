"""What the history records of a pass: step results taken from the plan, and the plan a cut-short run quotes."""

from __future__ import annotations

from aeon.domain.history import DepthRecord, ExecutionPass, PassSummary, TimingInformation, step_results
from aeon.domain.phases import PassPhase
from aeon.domain.plan import ExecutionMode, Plan, PlanStep, StepStatus
from aeon.domain.profile import AdaptiveDepthConfiguration, ReasoningMode


def plan(*statuses: StepStatus) -> Plan:
    return Plan(
        goal="g",
        steps=[
            PlanStep(step_id=f"s{n}", description="d", status=s, step_output=n if s is StepStatus.COMPLETE else None)
            for n, s in enumerate(statuses, start=1)
        ],
    )


def test_step_results_copy_every_step_so_later_changes_to_the_plan_do_not_rewrite_history():
    p = plan(StepStatus.COMPLETE, StepStatus.FAILED)
    p.steps[0].mode = ExecutionMode.TOOL
    p.steps[1].errors = ["boom"]
    results = step_results(p)
    assert (results["s1"].status, results["s1"].output, results["s1"].mode) == (
        StepStatus.COMPLETE,
        1,
        ExecutionMode.TOOL,
    )
    p.steps[1].errors.append("later")
    assert results["s2"].errors == ["boom"]


def test_no_plan_has_no_results():
    assert step_results(None) == {}


def test_a_pass_is_quoted_with_its_final_plan_when_it_has_one():
    start, final = plan(StepStatus.PENDING), plan(StepStatus.COMPLETE)
    xp = ExecutionPass(
        pass_number=2,
        phase=PassPhase.EXECUTE,
        plan_state=start,
        ttl_remaining=1,
        timing_information=TimingInformation(start_time="2026-01-01T00:00:00+00:00"),
    )
    assert PassSummary.of(xp).plan_state is start
    xp.final_plan_state = final
    summary = PassSummary.of(xp)
    assert summary.plan_state is final and summary.pass_number == 2


def test_a_depth_record_starts_from_the_configuration_and_leaves_the_decision_open():
    depth = AdaptiveDepthConfiguration(
        detected_complexity="moderate",
        allocated_ttl=3,
        reasoning_mode=ReasoningMode.BALANCED,
        adjustment_reason="depth 3",
        heuristics_used=["depth"],
    )
    record = DepthRecord.of(depth)
    assert (record.allocated_ttl, record.reasoning_mode, record.heuristics_used) == (3, "balanced", ["depth"])
    assert record.decision is None and record.decision_reason is None
