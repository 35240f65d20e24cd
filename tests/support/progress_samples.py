"""One realistic instance of every progress event type, for the round-trip and display tests."""

from __future__ import annotations

import msgspec

from aeon.domain.advisories import FollowUpQuestion, RefinementFailed, RepairConflict
from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Verdict
from aeon.domain.evaluation import ConvergenceAssessment
from aeon.domain.phases import PassPhase, Phase
from aeon.domain.plan import ExecutionMode, Plan, StepStatus
from aeon.domain.profile import DepthDecision
from aeon.domain.progress import (
    ApprovalDecided,
    ApprovalRequested,
    DepthDecided,
    Evaluated,
    LLMCallEnded,
    LLMCallStarted,
    LLMRetryRound,
    PhaseEnded,
    PhaseStarted,
    PlanMade,
    PrefixUncached,
    ProgressEvent,
    Refined,
    StepEnded,
    StepFallback,
    StepRepaired,
    StepStarted,
    SupervisorActed,
    Warned,
)
from aeon.domain.records import SupervisorAction

PLAN = msgspec.convert(
    {
        "goal": "add then explain",
        "steps": [
            {"step_id": "s1", "description": "add", "tool": "calculator", "args": {"expression": "5 + 10"}},
            {"step_id": "s2", "description": "explain s1", "agent": "llm"},
        ],
    },
    Plan,
)
ASSESSMENT = ConvergenceAssessment(
    converged=False,
    reason_codes=["incomplete", "failed_step:s2"],
    scores={"completeness_score": 0.5, "coherence_score": 0.9},
    explanation="s2 failed",
)
ADVICE = (
    FollowUpQuestion(pass_number=1, step_id="s2", question="which currency?"),
    RepairConflict(
        pass_number=1, step_id="s1", validator_repair={"tool": "calculator"}, issue_id="i1", planner_action="MODIFY"
    ),
    RefinementFailed(pass_number=1, detail="not json"),
)

ASKED = ApprovalRequest(
    run_id="r1", key="p1:s1", step_id="s1", description="send", tool="send", args={"text": "a"}, pass_number=1
)

SAMPLES: list[ProgressEvent] = [
    PhaseStarted(phase=Phase.B, pass_number=2),
    PhaseEnded(phase=Phase.B, pass_number=2, outcome="expired", duration_seconds=1.25),
    PlanMade(plan=PLAN),
    StepStarted(step_id="s1", description="add", index=1, total=2),
    StepEnded(step_id="s1", status=StepStatus.COMPLETE, mode=ExecutionMode.TOOL, output={"sum": 15}),
    StepEnded(step_id="s2", status=StepStatus.INVALID, errors=("Tool 'adder' not found in registry",)),
    StepRepaired(step_id="s1", tool="calculator", args={"expression": "5 + 10"}),
    StepFallback(step_id="s2"),
    PrefixUncached(provider="openai", prefix_tokens=180, cache_min_tokens=1024),
    LLMCallStarted(purpose="execute_step:s2", phase=PassPhase.EXECUTE, step_id="s2"),
    LLMCallEnded(
        purpose="execute_step:s2",
        completion_tokens=42,
        tokens_per_s=21.5,
        prompt_tokens=300,
        cached_tokens=128,
        cost=0.0012,
        seconds=1.95,
        model="gpt-x",
        step_id="s2",
        output="The sum is 15.",
        finish_reason="stop",
    ),
    LLMCallEnded(purpose="plan", completion_tokens=0, seconds=0.4, error="AEON.LLM.UNAVAILABLE"),
    LLMRetryRound(purpose="plan", attempts=3, cause="HTTP 429", wait_seconds=12.0),
    SupervisorActed(action=SupervisorAction(kind="llm_repair", target="plan", detail="fixed JSON", attempt=1)),
    Evaluated(assessment=ASSESSMENT),
    Refined(applied=1, rejected=1, advisories=ADVICE),
    DepthDecided(decision=DepthDecision.CONTINUE, reason="not converged, budget left"),
    Warned(message="step s2: tool 'adder' was not called"),
    ApprovalRequested(request=ASKED),
    ApprovalDecided(
        step_id="s1", decision=ApprovalDecision(verdict=Verdict.APPROVE, by="ana", args={"text": "b"}), edited=True
    ),
]
