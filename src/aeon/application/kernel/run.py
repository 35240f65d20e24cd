"""One run's collaborators: its state record, the budget meter, the recorder, the context guard and the clock."""

from __future__ import annotations

from typing import Protocol

import msgspec

from aeon.application.errors import BudgetExhausted
from aeon.application.llm.guard import ContextGuard
from aeon.application.policy import Policy
from aeon.application.ports import ClockPort, LoggerPort, ProgressPort, TracerPort
from aeon.application.recorder import Recorder
from aeon.application.redaction import NO_SECRETS, Redactor
from aeon.application.tracing import NULL_TRACER
from aeon.domain.budget import BudgetLimits, BudgetMeter, Cap, ExpirationType
from aeon.domain.context import StageInput
from aeon.domain.evaluation import ConvergenceCriteria
from aeon.domain.ledger import ModelPrice
from aeon.domain.phases import PassPhase, Phase, Stage
from aeon.domain.plan import Plan
from aeon.domain.profile import TaskProfile
from aeon.domain.run_state import RunState
from aeon.domain.tools import OUTPUT_CHECK, OutputCheck


class RunSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What one run may spend and how it judges; these defaults are the config's (settings.py reads them here)."""

    ttl: int = 3
    max_llm_calls: int = 30
    max_tokens: int | None = None
    max_seconds: float | None = None
    max_plan_steps: int = 20  # what the model's plan is asked to stay under (real tasks take 9-19 tool steps)
    llm_max_tokens: int | None = None
    # tokens the model's prompt and answer may take together (llm.context_window); None: what the model reports
    context_window: int | None = None
    evaluate: bool = True  # False: one plan → execute pass, no profile, evaluation or refinement
    ttl_given: bool = False  # the user set the TTL (--ttl): with a given plan, no profiling call, TTL as given
    criteria: ConvergenceCriteria = ConvergenceCriteria()
    max_cost: float | None = None  # USD; checked before every call against its worst case
    prices: dict[str, ModelPrice] = msgspec.field(default_factory=dict)  # model → USD per million tokens
    approval_timeout: float = 86400.0  # seconds a tool call waits for a person's decision before the run ends
    output_check: OutputCheck = OUTPUT_CHECK  # an output not matching its tool's return annotation: warn, fail or off
    policy: Policy = Policy()  # what may flow into which tool call (config policy:)

    def limits(self) -> BudgetLimits:
        return BudgetLimits(
            ttl=self.ttl,
            max_llm_calls=self.max_llm_calls,
            max_tokens=self.max_tokens,
            max_seconds=self.max_seconds,
            max_cost=self.max_cost,
        )


class Run:
    """What every part of one run shares. The state is data; the meter owns the budget arithmetic; the recorder
    writes records and progress; the redactor blanks secrets in what leaves the run; the guard checks LLM-call
    contexts. `stage` and `current_step` say where the run is, for records and errors."""

    def __init__(
        self,
        state: RunState,
        *,
        logger: LoggerPort,
        progress: ProgressPort | None,
        clock: ClockPort,
        tracer: TracerPort = NULL_TRACER,
        redactor: Redactor = NO_SECRETS,
    ) -> None:
        self.state = state
        self.redactor = redactor
        self.clock = clock
        self.tracer = tracer
        self.meter = BudgetMeter(state.budget, now=clock.monotonic())
        self.record = Recorder(logger, progress, state, redactor)
        self.guard = ContextGuard(state)
        self.stage = state.next_stage
        self.current_step: str | None = None

    @property
    def label(self) -> PassPhase:
        return self.stage.label(self.state.pass_number)

    @property
    def phase(self) -> Phase:
        return self.stage.phase

    @property
    def plan(self) -> Plan:
        assert self.state.plan is not None, "no plan yet"
        return self.state.plan

    @property
    def profile(self) -> TaskProfile:
        assert self.state.profile is not None, "not profiled yet"
        return self.state.profile

    def enter(self, given: StageInput) -> None:
        """The stage of `given` starts: records and errors name it, its LLM calls are checked against its input."""
        self.stage = given.stage
        self.guard.enter(given)

    def check_caps(self, where: str, *, needs_llm: bool = True) -> None:
        """Raise BudgetExhausted (mid-phase) when a cap this work needs is used up; before every step and LLM call."""
        hit = self.meter.exhausted(self.clock.monotonic(), needs_llm=needs_llm)
        if hit is not None:
            raise BudgetExhausted.mid_phase(hit, f"exhausted {where}")

    def remaining_seconds(self) -> float | None:
        return self.meter.remaining_seconds(self.clock.monotonic())

    def out_of_time(self, where: str) -> BudgetExhausted:
        """The expiry for work cut off by run.max_seconds while it was still running."""
        self.meter.tick(self.clock.monotonic())
        return BudgetExhausted.mid_phase(self.meter.time_cap(), f"ran out {where}")

    def boundary(self, stage: Stage) -> None:
        """TTL is checked before every phase entry: none left ends the run here (a phase-boundary expiry)."""
        if self.meter.ttl_spent:
            raise BudgetExhausted(
                f"TTL is 0 at the boundary before phase {stage.phase.value} of pass {self.state.pass_number}",
                expiration_type=ExpirationType.PHASE_BOUNDARY,
                phase=stage.phase.value,
                cap=Cap.TTL,
            )


# -- what each part of the loop may touch of a Run -----------------------------------------------------------------
# Run satisfies every one of these, and llm/calling.py's ToolTurn, PhaseFrame and CallingRun; a stage or service
# names the narrowest, and mypy keeps it to that.


class StageRun(Protocol):
    """What every stage touches: the state (changed only through RunState's named methods), the plan and profile
    it reads, the recorder, and `enter` to say which stage's input its LLM calls are checked against."""

    @property
    def state(self) -> RunState: ...

    @property
    def record(self) -> Recorder: ...

    @property
    def plan(self) -> Plan: ...

    @property
    def profile(self) -> TaskProfile: ...

    def enter(self, given: StageInput) -> None: ...


class PlanningRun(StageRun, Protocol):
    """Phase A also allocates the TTL on the meter and names its pass phase in the cycle record."""

    @property
    def meter(self) -> BudgetMeter: ...

    @property
    def label(self) -> PassPhase: ...


class ExecutingRun(StageRun, Protocol):
    """Phase C1 also checks the caps before each step and names its pass phase in each step's cycle record; C3
    asks for the seconds left before a refinement."""

    current_step: str | None

    @property
    def label(self) -> PassPhase: ...

    def check_caps(self, where: str, *, needs_llm: bool = True) -> None: ...

    def remaining_seconds(self) -> float | None: ...
