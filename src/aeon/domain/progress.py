"""Progress events: what a run reports while it runs, one frozen msgspec Struct per kind, as the ProgressEvent union.

A ProgressPort receives them in order; a display dispatches on their type. They are plain, public values: every
one encodes to JSON as a tagged union (`{"type": "StepStarted", ...}`) and decodes back with
`msgspec.json.decode(data, type=ProgressEvent)`. What the run shows is redacted before it is sent, and a value an
event holds (a plan, say) is a copy the run no longer changes.

    PhaseStarted     a phase (A plan, B execute, C evaluate, D refine) of a pass begins
    PhaseEnded       a phase ended: how (success, failure, expired, interrupted) and how long it took
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
    ApprovalRequested  a tool call waits for a person: the step, the tool and its exact arguments
    ApprovalDecided  the person's decision: approved (maybe with edited arguments) or denied, with the reason
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from aeon.domain.advisories import Advisory
from aeon.domain.approval import ApprovalDecision, ApprovalRequest
from aeon.domain.evaluation import ConvergenceAssessment
from aeon.domain.phases import PassPhase, Phase
from aeon.domain.plan import ExecutionMode, Plan, StepStatus
from aeon.domain.profile import DepthDecision
from aeon.domain.records import SupervisorAction


class _Event(msgspec.Struct, tag=True, frozen=True, kw_only=True):
    """Every event: tagged by its class name in the `type` field, immutable once sent (each subclass says
    `frozen=True` again for mypy, which does not inherit it)."""


class PhaseStarted(_Event, frozen=True):
    """Phase `phase` of pass `pass_number` (from 1) begins."""

    phase: Phase
    pass_number: int


PhaseOutcome = Literal["success", "failure", "expired", "interrupted"]


class PhaseEnded(_Event, frozen=True):
    """Phase `phase` of pass `pass_number` ended with `outcome` after `duration_seconds`: success, failure (an
    error the run ends with, or retries), expired (the TTL or a cap ran out) or interrupted (the run was cancelled)."""

    phase: Phase
    pass_number: int
    outcome: PhaseOutcome
    duration_seconds: float


class PlanMade(_Event, frozen=True):
    """The plan the run made (or revised) and will execute, whole."""

    plan: Plan


class StepStarted(_Event, frozen=True):
    """Step `step_id` ("s2"), number `index` of `total`, begins running."""

    step_id: str
    description: str
    index: int
    total: int


class StepEnded(_Event, frozen=True):
    """Step `step_id` ended with `status`; `mode` (tool, llm, repaired, fallback …) and `output` are None for a step
    that never ran (invalid or blocked), and `errors` says why it failed or did not run."""

    step_id: str
    status: StepStatus
    mode: ExecutionMode | None = None
    output: Any = None
    errors: tuple[str, ...] = ()


class StepRepaired(_Event, frozen=True):
    """Step `step_id`'s tool call did not fit; the supervisor repaired it to call `tool` with `args`."""

    step_id: str
    tool: str | None
    args: dict[str, Any]


class StepFallback(_Event, frozen=True):
    """Step `step_id` could not be repaired: the LLM answers in its place (its output is unverified text)."""

    step_id: str


class LLMCallStarted(_Event, frozen=True):
    """A request for `purpose` (what the answer is for: a plan, a step, a repair …) is sent during `phase`, for
    step `step_id` if any."""

    purpose: str
    phase: PassPhase
    step_id: str | None = None


class PrefixUncached(_Event, frozen=True):
    """The run's shared prompt prefix, about `prefix_tokens` long, is under the `cache_min_tokens` that `provider`
    caches: its calls are not served from the prompt cache (the `prefix_uncached` log record says so too)."""

    provider: str
    prefix_tokens: int
    cache_min_tokens: int


class LLMCallEnded(_Event, frozen=True):
    """The call for `purpose` (for step `step_id` if any) ended, as its `llm_call` log record says: the answer
    `output` from `model`, or `error` (an error code such as AEON.LLM.UNAVAILABLE, output None) for a call that
    failed but was still sent; `prompt_tokens` (of them `cached_tokens`) and `completion_tokens`, `cost` in USD from
    the price table (None when the model has no price), `seconds`, and `tokens_per_s` (None when too fast to say)."""

    purpose: str
    completion_tokens: int
    tokens_per_s: float | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None
    seconds: float = 0.0
    model: str | None = None
    step_id: str | None = None
    output: str | None = None
    finish_reason: str | None = None
    error: str | None = None


class LLMRetryRound(_Event, frozen=True):
    """The provider was still unavailable after `attempts` requests (`cause`: "HTTP 503" …): the call for `purpose`
    gets one more round after `wait_seconds`."""

    purpose: str
    attempts: int
    cause: str
    wait_seconds: float


class SupervisorActed(_Event, frozen=True):
    """The supervisor acted on an output: what it did, on what, and whether it worked."""

    action: SupervisorAction


class Evaluated(_Event, frozen=True):
    """The pass's convergence assessment: converged or not, and why."""

    assessment: ConvergenceAssessment


class Refined(_Event, frozen=True):
    """Refinement applied `applied` changes to the plan and rejected `rejected`; `advisories` are what it noticed."""

    applied: int
    rejected: int
    advisories: tuple[Advisory, ...] = ()


class DepthDecided(_Event, frozen=True):
    """The adaptive-depth `decision` after an evaluation (continue, escalate or halt) and its `reason`."""

    decision: DepthDecision
    reason: str


class Warned(_Event, frozen=True):
    """Something a human should know that does not stop the run (also kept in the result's warnings)."""

    message: str


class ApprovalRequested(_Event, frozen=True):
    """A tool call waits for a person's decision (`aeon approve` / `aeon deny`, the terminal, or a callback)."""

    request: ApprovalRequest


class ApprovalDecided(_Event, frozen=True):
    """A person decided on a waiting call; `edited` says the call goes ahead with other arguments than asked."""

    step_id: str
    decision: ApprovalDecision
    edited: bool = False


ProgressEvent = (
    PhaseStarted
    | PhaseEnded
    | PlanMade
    | StepStarted
    | StepEnded
    | StepRepaired
    | StepFallback
    | LLMCallStarted
    | LLMCallEnded
    | PrefixUncached
    | LLMRetryRound
    | SupervisorActed
    | Evaluated
    | Refined
    | DepthDecided
    | Warned
    | ApprovalRequested
    | ApprovalDecided
)
