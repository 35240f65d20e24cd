"""The events `aeon.stream` yields, in the order a run makes them; each one a frozen msgspec Struct.

    PhaseStarted     a phase (A plan, B validate, C execute and evaluate, D decide) of a pass begins
    PhaseEnded       it ended: outcome (success, failure, expired, interrupted) and duration
    PlanMade         a plan was made or revised, whole
    StepStarted      a step begins running
    StepEnded        a step ended (complete, failed, invalid or blocked), with its output or its errors
    StepRepaired     a step's tool call was repaired: the tool and arguments it now uses
    StepFallback     a step could not be repaired and falls back to LLM reasoning
    LLMCallStarted   a request to the model is sent
    LLMCallEnded     the call ended: its answer (or error code), tokens, cost, seconds and rate
    LLMRetryRound    the provider is still unavailable after its attempts: one more round after a wait
    SupervisorActed  the supervisor repaired (or failed to repair) an output
    Evaluated        the pass's convergence assessment
    Refined          refinement applied some changes, rejected others, and recorded advisories
    DepthDecided     the adaptive-depth decision after an evaluation
    Warned           something a human should know that does not stop the run
    RunEnded         the run ended: its RunResult, as aeon.run returns it; always the last event

They carry the facts of the JSONL log's records, with every secret redacted as there. Dispatch on the type
(`match event: case StepEnded(step_id=s, output=o): …`); each encodes to JSON as a tagged union
(`{"type": "StepEnded", …}`) and decodes back with `msgspec.json.decode(data, type=aeon.events.Event)`.
"""

from __future__ import annotations

from aeon.application.kernel.result import RunEnded
from aeon.domain.progress import (
    DepthDecided,
    Evaluated,
    LLMCallEnded,
    LLMCallStarted,
    LLMRetryRound,
    PhaseEnded,
    PhaseStarted,
    PlanMade,
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
    "DepthDecided",
    "Evaluated",
    "Event",
    "LLMCallEnded",
    "LLMCallStarted",
    "LLMRetryRound",
    "PhaseEnded",
    "PhaseStarted",
    "PlanMade",
    "Refined",
    "RunEnded",
    "StepEnded",
    "StepFallback",
    "StepRepaired",
    "StepStarted",
    "SupervisorActed",
    "Warned",
]
