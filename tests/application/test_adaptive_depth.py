"""Acceptance tests for 02 US4, adaptive reasoning depth.

The TaskProfile is inferred by the model (checked and repaired by the supervisor), versioned in the history and
revised only at pass boundaries when evaluation brings new information; TTL and reasoning mode follow from it,
within run.ttl; escalation adds passes within the cap; `aeon inspect` shows why.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from aeon.application.judges.adaptive_depth import allocate, complexity, decide, revision_reasons
from aeon.application.results import RunStatus
from aeon.application.views.inspection import analyse
from aeon.application.views.inspection_text import inspection_text
from aeon.domain.evaluation import (
    ArtifactType,
    ConvergenceAssessment,
    IssueType,
    SemanticValidationReport,
    Severity,
    ValidationIssue,
)
from aeon.domain.profile import (
    AdaptiveDepthConfiguration,
    Breadth,
    Confidence,
    DepthDecision,
    ReasoningMode,
    TaskProfile,
    ToolUsage,
    stabilize,
)

from harness import document
from multipass import profile, verdict
from responder import prompt_of, run_with

SUM_PLAN = {
    "goal": "add 5 and 10",
    "steps": [{"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expression": "5 + 10"}}],
}
SIMPLE = {"depth": 1, "sufficiency": 1.0, "breadth": "narrow", "confidence": "low"}  # very_low: 1 pass, shallow
COMPLEX = {"depth": 5, "sufficiency": 0.1, "breadth": "broad", "confidence": "high"}  # very_high: 5 passes, deep
HIGH_ISSUE = {
    "type": "consistency",
    "severity": "HIGH",
    "step_id": "s1",
    "description": "the plan contradicts the request",
    "repair": "",
}
_MODE_RANK = {ReasoningMode.SHALLOW: 0, ReasoningMode.BALANCED: 1, ReasoningMode.DEEP: 2}


def _profile(**kw: Any) -> dict[str, Any]:
    return json.loads(profile(**kw))


def _answers(**overrides: Any) -> dict[str, Any]:
    answers: dict[str, Any] = {
        "task_profile": lambda m, n: _profile(depth=3),
        "plan": lambda m, n: SUM_PLAN,
        "step_result": lambda m, n: {"answer": "15", "clarity_state": "CLEAR", "handoff_to_next": ""},
        "validation": lambda m, n: {"issues": []},
        "convergence": lambda m, n: json.loads(verdict(True)),
        "refinement": lambda m, n: {"actions": []},
    }
    answers.update(overrides)
    return answers


def _recording(answers: Mapping[str, Callable[[Any, int], Any]], calls: list[tuple[str, str]]) -> dict[str, Any]:
    """The same answers, noting (schema name, prompt) of every call in order."""

    def wrap(name: str, answer: Callable[[Any, int], Any]) -> Callable[[Any, int], Any]:
        def call(messages: Any, nth: int) -> Any:
            calls.append((name, prompt_of(messages)))
            return answer(messages, nth)

        return call

    return {name: wrap(name, answer) for name, answer in answers.items()}


def _events(log: Any, event: str) -> list[dict[str, Any]]:
    return [r for r in map(json.loads, log.read_text().splitlines()) if r["event"] == event]


def _known_so_far(prompt: str) -> str:
    return [line for line in prompt.splitlines() if line.startswith("Known so far:")][-1]


def _task_profile(depth: int, sufficiency: float, usage: str, breadth: str, confidence: str) -> TaskProfile:
    return TaskProfile(
        profile_version=1,
        reasoning_depth=depth,
        information_sufficiency=sufficiency,
        expected_tool_usage=ToolUsage(usage),
        output_breadth=Breadth(breadth),
        confidence_requirement=Confidence(confidence),
        raw_inference="test",
    )


def _assessment(converged: bool) -> ConvergenceAssessment:
    return ConvergenceAssessment(
        converged=converged,
        reason_codes=["complete"] if converged else ["incomplete"],
        scores={"completeness_score": 1.0 if converged else 0.4, "coherence_score": 1.0},
        explanation="x",
    )


def _report(*issues: tuple[IssueType, Severity]) -> SemanticValidationReport:
    return SemanticValidationReport.build(
        "v",
        ArtifactType.CROSS_PHASE,
        [
            ValidationIssue(issue_id=f"V{i}", type=t, severity=s, description="d", location={"step_id": "s1"})
            for i, (t, s) in enumerate(issues, 1)
        ],
    )


profiles = st.builds(
    _task_profile,
    st.integers(1, 5),
    st.floats(0.0, 1.0, allow_nan=False),
    st.sampled_from([e.value for e in ToolUsage]),
    st.sampled_from([e.value for e in Breadth]),
    st.sampled_from([e.value for e in Confidence]),
)


# == The profile is inferred by the model with every dimension and its explanation =====================================
def test_the_inferred_profile_has_all_five_dimensions_and_the_explanation(tmp_path):
    answer = {
        "reasoning_depth": 4,
        "information_sufficiency": 0.3,
        "expected_tool_usage": "extensive",
        "output_breadth": "broad",
        "confidence_requirement": "high",
        "raw_inference": "Many unknowns; several tools and careful checking.",
    }
    calls: list[tuple[str, str]] = []
    answers = _recording(_answers(task_profile=lambda m, n: answer), calls)
    result, _ = run_with(tmp_path, answers, "plan a data migration", ttl=3)
    assert result.status is RunStatus.COMPLETED
    (recorded,) = result.history.profiles
    assert msgspec.to_builtins(recorded) == {"profile_version": 1, **answer}
    assert result.history.passes[0].task_profile == recorded
    assert calls[0][0] == "task_profile"  # inferred first, from the request
    assert "Request: plan a data migration" in calls[0][1]
    # later phases see every dimension, never a null profile
    later = [p for name, p in calls if name in ("validation", "convergence")]
    assert later and all(
        "depth 4/5, information 0.3, tools extensive, breadth broad, confidence high" in p for p in later
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"reasoning_depth": 3},  # dimensions missing
        {**_profile(depth=3), "reasoning_depth": 9},  # out of range
        {**_profile(depth=3), "information_sufficiency": 1.5},
        {**_profile(depth=3), "expected_tool_usage": "lots"},  # not in the enum
        {**_profile(depth=3), "raw_inference": " "},  # no explanation
        "deep, I think",  # not JSON at all
    ],
    ids=["incomplete", "depth-9", "sufficiency-1.5", "unknown-usage", "blank-inference", "not-json"],
)
def test_an_incomplete_or_invalid_profile_answer_is_repaired_by_the_supervisor(tmp_path, bad):
    good = _profile(depth=2, sufficiency=0.9)
    calls: list[tuple[str, str]] = []
    answers = _recording(_answers(task_profile=lambda m, n: bad if n == 0 else good), calls)
    result, _ = run_with(tmp_path, answers, "add 5 and 10", ttl=3)
    assert result.status is RunStatus.COMPLETED
    names = [name for name, _ in calls]
    # phase A's one call (profile and plan), then its repair call: the profile answered twice
    assert names[0] == "task_profile" and names.count("task_profile") == 2
    assert document(result)["counts"]["llm_repairs"] == 1
    assert msgspec.to_builtins(result.history.profiles) == [{"profile_version": 1, **good}]


def test_a_profile_that_cannot_be_repaired_ends_the_run_with_a_structured_error_before_any_step_runs(tmp_path):
    calls: list[tuple[str, str]] = []
    answers = _recording(_answers(task_profile=lambda m, n: {"reasoning_depth": 3}), calls)
    result, _ = run_with(tmp_path, answers, "add 5 and 10", ttl=3)
    assert result.status is RunStatus.ERROR and result.error is not None
    assert result.error.phase == "A" and "INCOMPLETE_PROFILE" in result.error.code
    # nothing runs on an unknown profile: the plan asked with it is dropped, no step runs, nothing is evaluated
    assert {name for name, _ in calls} == {"task_profile", "plan"} and result.plan is None


# == The profile is versioned, revised only at pass boundaries and only on new information =============================
def test_a_pass_that_brings_no_new_information_keeps_the_profile(tmp_path):
    calls: list[tuple[str, str]] = []
    answers = _recording(_answers(convergence=lambda m, n: json.loads(verdict(n >= 1))), calls)
    result, log = run_with(tmp_path, answers, "add 5 and 10", ttl=3)
    assert result.converged is True and result.passes == 2
    assert [name for name, _ in calls].count("task_profile") == 1
    assert [p.profile_version for p in result.history.profiles] == [1]
    first, second = result.history.passes
    assert second.phases[0].phase == "B"  # no re-profiling phase A
    assert second.task_profile == first.task_profile
    assert second.adaptive_depth is not None and second.adaptive_depth.profile_revision_reasons == []
    assert len(_events(log, "ttl_allocated")) == 1


@pytest.mark.parametrize(
    ("issue", "why"),
    [
        (HIGH_ISSUE, "validation found HIGH issues"),
        (
            {"type": "specificity", "severity": "MEDIUM", "step_id": "s1", "description": "vague", "repair": ""},
            "fragments lack specificity",
        ),
    ],
    ids=["severe-validation", "vague-fragment"],
)
def test_new_information_revises_the_profile_at_the_next_pass_boundary_only(tmp_path, issue, why):
    calls: list[tuple[str, str]] = []
    answers = _answers(
        task_profile=lambda m, n: _profile(depth=2 + n, sufficiency=0.8 - 0.4 * n),
        validation=lambda m, n: {"issues": [issue] if n == 0 else []},
        convergence=lambda m, n: json.loads(verdict(n >= 1)),
    )
    result, log = run_with(tmp_path, _recording(answers, calls), "add 5 and 10", ttl=4)
    assert result.converged is True and result.passes == 2
    assert [(p.profile_version, p.reasoning_depth) for p in result.history.profiles] == [(1, 2), (2, 3)]
    first, second = result.history.passes
    assert first.adaptive_depth is not None and why in first.adaptive_depth.profile_revision_reasons
    assert first.adaptive_depth.next_phase == "A"
    assert second.phases[0].phase == "A"  # the revision opened the next pass
    assert first.task_profile.profile_version == 1 and second.task_profile.profile_version == 2
    # never mid-pass: every re-profiling call comes right after the previous pass's evaluation/refinement,
    # and is told what was learned
    names = [name for name, _ in calls]
    revisions = [i for i, name in enumerate(names) if name == "task_profile"][1:]
    assert len(revisions) == 1 and names[revisions[0] - 1] in ("convergence", "refinement")
    assert why in _known_so_far(calls[revisions[0]][1])
    # each pass's evaluation saw the profile of its own pass
    validations = [p for name, p in calls if name == "validation"]
    assert "depth 2/5" in validations[0] and "depth 3/5" in validations[1]
    assert [e["allocated_ttl"] for e in _events(log, "ttl_allocated")] == [
        allocate(_task_profile(d, s, "minimal", "moderate", "medium"), cap=4).allocated_ttl
        for d, s in ((2, 0.8), (3, 0.4))
    ]


def test_a_converged_pass_never_revises_the_profile_even_with_issues(tmp_path):
    low = {"type": "specificity", "severity": "MEDIUM", "step_id": "s1", "description": "vague", "repair": ""}
    calls: list[tuple[str, str]] = []
    answers = _recording(_answers(validation=lambda m, n: {"issues": [low]}), calls)
    result, _ = run_with(tmp_path, answers, "add 5 and 10", ttl=3)
    assert result.converged is True and result.passes == 1
    assert [name for name, _ in calls].count("task_profile") == 1


@pytest.mark.parametrize(
    ("report", "converged", "recursion", "revisions", "expected"),
    [
        (_report((IssueType.CONSISTENCY, Severity.HIGH)), False, False, 0, ["validation found HIGH issues"]),
        (_report((IssueType.HALLUCINATION, Severity.CRITICAL)), False, False, 0, ["validation found CRITICAL issues"]),
        (_report((IssueType.SPECIFICITY, Severity.MEDIUM)), False, False, 0, ["fragments lack specificity"]),
        (_report((IssueType.SPECIFICITY, Severity.LOW)), False, False, 0, []),  # a nit is no new information
        (_report(), False, True, 0, ["the recursive planner decomposed or flagged fragments"]),
        (_report(), False, False, 0, []),
        (_report((IssueType.CONSISTENCY, Severity.HIGH)), True, True, 0, []),  # converged: nothing to revise
        (_report((IssueType.CONSISTENCY, Severity.HIGH)), False, True, 2, []),  # revisions are bounded
    ],
)
def test_only_validation_convergence_or_recursion_news_revises_the_profile(
    report, converged, recursion, revisions, expected
):
    got = revision_reasons(report, _assessment(converged), recursion=recursion, revisions=revisions)
    assert got == expected


# == Tier stability ====================================================================================================
@given(new=st.integers(1, 5), previous=st.integers(1, 5))
def test_a_re_inferred_depth_stays_within_one_tier_and_says_so_when_clamped(new, previous):
    def p(depth: int, version: int) -> TaskProfile:
        return msgspec.structs.replace(
            _task_profile(depth, 0.5, "minimal", "moderate", "medium"), profile_version=version
        )

    got, note = stabilize(p(new, 2), p(previous, 1))
    assert abs(got.reasoning_depth - previous) <= 1
    assert (note is not None) == (abs(new - previous) > 1)
    if note is None:
        assert got == p(new, 2)
    else:
        assert f"{new} clamped to {got.reasoning_depth}" in note
    assert msgspec.structs.replace(got, reasoning_depth=new) == p(new, 2)  # nothing else changes
    assert stabilize(p(new, 1), None) == (p(new, 1), None)  # the first profile is taken as inferred


def test_a_clamped_revision_is_logged_as_profile_clamped(tmp_path):
    answers = _answers(
        task_profile=lambda m, n: _profile(depth=5 if n == 0 else 1),
        validation=lambda m, n: {"issues": [HIGH_ISSUE] if n == 0 else []},
        convergence=lambda m, n: json.loads(verdict(n >= 1)),
    )
    result, log = run_with(tmp_path, answers, "add 5 and 10", ttl=4)
    assert [p.reasoning_depth for p in result.history.profiles] == [5, 4]  # 1 would be a jump of four tiers
    (event,) = _events(log, "profile_clamped")
    assert event["profile_version"] == 2 and "1 clamped to 4" in event["note"]
    (advisory,) = [a for a in result.advisories if a.kind == "profile_clamped"]
    assert advisory.pass_number == 2 and advisory.reason == event["note"]


# == TTL and reasoning mode follow the profile, within run.ttl =========================================================
@given(p=profiles, cap=st.integers(1, 12))
def test_allocated_ttl_is_between_one_and_the_cap_and_explains_itself(p, cap):
    config = allocate(p, cap=cap)
    assert 1 <= config.allocated_ttl <= cap
    uncapped = allocate(p, cap=99).allocated_ttl
    assert config.allocated_ttl == min(uncapped, cap)
    assert ("capped by run.ttl" in config.adjustment_reason) == (uncapped > cap)
    assert config.detected_complexity in ("very_low", "low", "moderate", "high", "very_high")
    assert config.adjustment_reason.strip() and config.heuristics_used
    assert any(h.startswith("reasoning_depth+") for h in config.heuristics_used)
    assert config.ambiguity_score == pytest.approx(1.0 - p.information_sufficiency, abs=1e-3)


@given(p=profiles, cap=st.integers(1, 12), more=st.integers(1, 4))
def test_allocated_ttl_and_mode_never_drop_as_reasoning_depth_grows(p, cap, more):
    deeper = msgspec.structs.replace(p, reasoning_depth=min(5, p.reasoning_depth + more))
    a, b = allocate(p, cap=cap), allocate(deeper, cap=cap)
    assert a.allocated_ttl <= b.allocated_ttl
    assert _MODE_RANK[a.reasoning_mode] <= _MODE_RANK[b.reasoning_mode]


@given(p=profiles, cap=st.integers(1, 12), more=st.floats(0.0, 1.0, allow_nan=False))
def test_allocated_ttl_and_mode_never_grow_as_information_sufficiency_grows(p, cap, more):
    clearer = msgspec.structs.replace(p, information_sufficiency=min(1.0, p.information_sufficiency + more))
    a, b = allocate(p, cap=cap), allocate(clearer, cap=cap)
    assert b.allocated_ttl <= a.allocated_ttl
    assert _MODE_RANK[b.reasoning_mode] <= _MODE_RANK[a.reasoning_mode]
    assert complexity(clearer)[0] <= complexity(p)[0]


@pytest.mark.parametrize(
    ("dims", "mode", "ttl"),
    [
        ((1, 1.0, "narrow", "low"), ReasoningMode.SHALLOW, 1),
        ((2, 0.9, "narrow", "low"), ReasoningMode.SHALLOW, 2),
        ((3, 1.0, "narrow", "low"), ReasoningMode.BALANCED, 3),
        ((4, 0.5, "narrow", "medium"), ReasoningMode.DEEP, 4),
        ((5, 0.0, "broad", "high"), ReasoningMode.DEEP, 5),
    ],
)
def test_reasoning_mode_is_chosen_from_the_profile(dims, mode, ttl):
    depth, sufficiency, breadth, confidence = dims
    config = allocate(_task_profile(depth, sufficiency, "minimal", breadth, confidence), cap=10)
    assert (config.reasoning_mode, config.allocated_ttl) == (mode, ttl)


@pytest.mark.parametrize(
    ("dims", "passes", "mode"),
    [(SIMPLE, 1, "shallow"), (COMPLEX, 5, "deep")],
    ids=["simple-task", "complex-ambiguous-task"],
)
def test_a_never_converging_task_runs_as_many_passes_as_its_profile_earns(tmp_path, dims, passes, mode):
    answers = _answers(task_profile=lambda m, n: _profile(**dims), convergence=lambda m, n: json.loads(verdict(False)))
    result, _ = run_with(tmp_path, answers, "add 5 and 10", ttl=5, max_llm_calls=100)
    assert result.status is RunStatus.TTL_EXPIRED and result.passes == passes
    first = result.history.passes[0].adaptive_depth or {}
    assert (first.allocated_ttl, first.reasoning_mode) == (passes, mode)
    assert result.history.passes[0].ttl_remaining == passes


def test_a_complex_task_on_a_small_cap_gets_the_cap_and_no_more(tmp_path):
    answers = _answers(
        task_profile=lambda m, n: _profile(**COMPLEX),
        validation=lambda m, n: {"issues": [HIGH_ISSUE]},  # escalation is wanted every pass
        convergence=lambda m, n: json.loads(verdict(False)),
    )
    result, _ = run_with(tmp_path, answers, "add 5 and 10", ttl=2, max_llm_calls=100)
    assert result.status is RunStatus.TTL_EXPIRED and result.passes == 2
    depths = [p.adaptive_depth or {} for p in result.history.passes]
    assert all(d.allocated_ttl <= 2 for d in depths)
    assert depths[0].allocated_ttl == 2 and "capped by run.ttl" in depths[0].adjustment_reason
    assert depths[-1].decision == "continue" and "TTL cap 2 is reached" in depths[-1].decision_reason
    assert document(result)["budget"]["ttl"] == 2


# == Scenario 3: revisions move the allocation both ways ===============================================================
def test_a_revision_to_a_harder_profile_raises_ttl_and_deepens_the_mode(tmp_path):
    answers = _answers(
        task_profile=lambda m, n: _profile(**SIMPLE) if n == 0 else _profile(depth=2, sufficiency=0.2, breadth="broad"),
        validation=lambda m, n: {"issues": [HIGH_ISSUE] if n == 0 else []},
        convergence=lambda m, n: json.loads(verdict(n >= 1)),
    )
    result, log = run_with(tmp_path, answers, "add 5 and 10", ttl=5)
    allocations = _events(log, "ttl_allocated")
    # the revised profile wants 4 passes; pass 1's escalation (+1 for the HIGH issue) is kept on top, within cap 5
    assert [(a["allocated_ttl"], a["reasoning_mode"]) for a in allocations] == [(1, "shallow"), (5, "deep")]
    assert allocations[1]["adjustment_reason"].startswith("profile v2 after validation found HIGH issues")
    assert "1 escalation(s) kept" in allocations[1]["adjustment_reason"]
    assert "profile_revision" in allocations[1]["heuristics_used"]
    assert [p.ttl_remaining for p in result.history.passes] == [1, 4]
    assert result.converged is True


def test_a_revision_to_a_simpler_profile_lowers_ttl_and_the_mode(tmp_path):
    answers = _answers(
        task_profile=lambda m, n: (
            _profile(depth=4, sufficiency=0.2, breadth="broad", confidence="high")
            if n == 0
            else _profile(**{**SIMPLE, "depth": 3})
        ),
        validation=lambda m, n: {"issues": [HIGH_ISSUE] if n == 0 else []},
        convergence=lambda m, n: json.loads(verdict(n >= 1)),
    )
    result, log = run_with(tmp_path, answers, "add 5 and 10", ttl=5)
    allocations = _events(log, "ttl_allocated")
    assert [(a["allocated_ttl"], a["reasoning_mode"]) for a in allocations] == [(5, "deep"), (3, "balanced")]
    assert [p.ttl_remaining for p in result.history.passes] == [5, 2]  # 3 passes in all, one already spent
    assert result.history.passes[1].adaptive_depth.reasoning_mode == "balanced"


# == Escalation on validation or convergence signals adds a pass within the cap, never past it =========================
def test_escalation_adds_passes_until_the_cap_and_says_why(tmp_path):
    answers = _answers(
        task_profile=lambda m, n: _profile(**SIMPLE),
        validation=lambda m, n: {"issues": [HIGH_ISSUE]},
        convergence=lambda m, n: json.loads(verdict(False)),
    )
    result, log = run_with(tmp_path, answers, "add 5 and 10", ttl=4, max_llm_calls=100)
    assert result.status is RunStatus.TTL_EXPIRED
    assert result.passes == 4  # 1 allocated, 3 added by escalation, none past run.ttl
    depths = [p.adaptive_depth or {} for p in result.history.passes]
    assert [d.decision for d in depths] == ["escalate", "escalate", "escalate", "continue"]
    for d in depths[:3]:
        assert (
            d.adjustment_reason.startswith("escalated: validation severity HIGH") and "+1 pass" in d.adjustment_reason
        )
        assert d.heuristics_used[0] == "escalation" and d.reasoning_mode == "deep"
        assert d.allocated_ttl <= 4
    assert "TTL cap 4 is reached" in depths[-1].decision_reason
    decisions = _events(log, "depth_decision")
    assert [e["decision"] for e in decisions] == ["escalate", "escalate", "escalate", "continue"]


def test_the_recorded_allocation_counts_the_passes_escalation_granted(tmp_path):
    answers = _answers(
        task_profile=lambda m, n: _profile(**SIMPLE),
        validation=lambda m, n: {"issues": [HIGH_ISSUE]},
        convergence=lambda m, n: json.loads(verdict(False)),
    )
    result, _ = run_with(tmp_path, answers, "add 5 and 10", ttl=4, max_llm_calls=100)
    assert result.passes == 4
    escalated = [p.adaptive_depth or {} for p in result.history.passes if p.adaptive_depth.decision == "escalate"]
    assert [d.allocated_ttl for d in escalated] == [2, 3, 4]  # pass n escalates to n + 1 passes in all


@given(
    cap=st.integers(1, 8),
    data=st.data(),
    severity=st.sampled_from(list(Severity)),
    failed_before=st.booleans(),
    converged=st.booleans(),
)
def test_a_depth_decision_never_plans_a_pass_past_the_cap(cap, data, severity, failed_before, converged):
    passes_done = data.draw(st.integers(1, cap))
    ttl_remaining = data.draw(st.integers(1, cap - passes_done + 1))  # the cycle now ending is still counted
    current = AdaptiveDepthConfiguration(
        detected_complexity="low",
        allocated_ttl=data.draw(st.integers(1, passes_done + ttl_remaining - 1)),
        reasoning_mode=ReasoningMode.SHALLOW,
        adjustment_reason="initial",
    )
    report = _report((IssueType.CONSISTENCY, severity))
    history = [_assessment(not failed_before), _assessment(converged)]
    out = decide(
        current,
        assessment=history[-1],
        report=report,
        history=history,
        passes_done=passes_done,
        cap=cap,
        ttl_remaining=ttl_remaining,
    )
    assert passes_done + ttl_remaining - 1 + out.ttl_delta <= cap
    assert out.configuration.allocated_ttl <= cap
    if converged:
        assert out.decision is DepthDecision.HALT and out.ttl_delta == 0
        return
    wants = severity.rank >= Severity.HIGH.rank or failed_before
    room = passes_done + ttl_remaining - 1 < cap
    assert (out.decision is DepthDecision.ESCALATE) == (wants and room)
    if out.decision is DepthDecision.ESCALATE:
        assert out.ttl_delta == 1 and out.configuration.allocated_ttl == current.allocated_ttl + 1
        assert out.configuration.reasoning_mode is ReasoningMode.DEEP
        assert out.configuration.heuristics_used[0] == "escalation" and "escalated" in out.reason
    else:
        assert out.decision is DepthDecision.CONTINUE and out.ttl_delta == 0 and out.configuration == current
        assert ("cap" in out.reason) == wants


# == Scenario 7: `aeon inspect` shows why depth and TTL changed ========================================================
def test_inspect_shows_the_adjustment_reasons_of_revisions_and_escalations(tmp_path):
    answers = _answers(
        task_profile=lambda m, n: _profile(**SIMPLE) if n == 0 else _profile(depth=2, sufficiency=0.2),
        validation=lambda m, n: {"issues": [HIGH_ISSUE] if n == 0 else []},
        convergence=lambda m, n: json.loads(verdict(n >= 1)),
    )
    result, _ = run_with(tmp_path, answers, "add 5 and 10", ttl=5)
    saved = json.loads(msgspec.json.encode(result.history))  # what `aeon run --history` writes
    report = analyse(saved)
    reasons = [d["reason"] for d in report["patterns"]["depth_adjustments"]]
    assert reasons[0].startswith("escalated: validation severity HIGH")
    assert reasons[1].startswith("profile v2 after validation found HIGH issues")
    out = io.StringIO()
    out.write(inspection_text(report))
    text = out.getvalue()
    assert "depth decision: escalate — escalated: validation severity HIGH" in text
    assert "profile v2 after validation found HIGH issues" in text
    assert "profile v1: depth 1" in text and "profile v2: depth 2" in text
    assert "[escalation, validation severity HIGH]" in text
