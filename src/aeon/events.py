"""The events `aeon.stream` yields, each a frozen msgspec Struct with a docstring of its own, in the order a run
makes them. A pass walks its phases, each between PhaseStarted and PhaseEnded (with its outcome and duration):

    A  LLMCallStarted / LLMCallEnded (profile, plan; tokens, cost, the answer) … PlanMade (the plan, whole)
    B  Warned, when the plan's checks have something to say
    C  StepStarted / StepEnded (status, output or errors) per step, with StepRepaired, StepFallback, SupervisorActed
       and the LLM calls a step makes; then Evaluated (the convergence assessment) and Refined
    D  DepthDecided (halt, continue or escalate)

A tool call that needs a person's approval is ApprovalRequested (step, tool, exact arguments) then ApprovalDecided
(who, approve or deny, edited or not), before its StepEnded. LLMRetryRound comes before a call's second round when
the provider stays unavailable, PrefixUncached before a run's first call when its shared prompt prefix is too short
for the provider's prompt cache, and RunEnded (the RunResult, as aeon.run returns it) is always last. They carry
the facts of the JSONL log's records, every secret redacted as there. Dispatch on the type (`match event: case
StepEnded(step_id=s, output=o): …`); each is JSON as a tagged union (`{"type": "StepEnded", …}`) and decodes back
with `msgspec.json.decode(data, type=aeon.events.Event)`.
"""

from __future__ import annotations

from aeon.application.results import RunEnded
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

Event = ProgressEvent | RunEnded
"""Any event of aeon.stream."""

__all__ = [
    "ApprovalDecided",
    "ApprovalRequested",
    "DepthDecided",
    "Evaluated",
    "Event",
    "LLMCallEnded",
    "LLMCallStarted",
    "LLMRetryRound",
    "PhaseEnded",
    "PhaseStarted",
    "PlanMade",
    "PrefixUncached",
    "Refined",
    "RunEnded",
    "StepEnded",
    "StepFallback",
    "StepRepaired",
    "StepStarted",
    "SupervisorActed",
    "Warned",
]
