"""What the LLM services and the tool turn may touch of a run (kernel/run.py's Run satisfies each): the views are
declared here, beside the services that take them, so that llm/ needs nothing from the kernel above it."""

from __future__ import annotations

from typing import Protocol

from aeon.application.errors import BudgetExhausted
from aeon.application.llm.guard import ContextGuard
from aeon.application.ports import ClockPort, TracerPort
from aeon.application.recorder import Recorder
from aeon.application.redaction import Redactor
from aeon.domain.budget import BudgetMeter
from aeon.domain.phases import PassPhase, Phase, Stage
from aeon.domain.run_state import RunState


class ToolTurn(Protocol):
    """What the executor touches while a step runs: which step it is, the deadline, the tracer and the records."""

    current_step: str | None

    @property
    def state(self) -> RunState: ...

    @property
    def record(self) -> Recorder: ...

    @property
    def tracer(self) -> TracerPort: ...

    def remaining_seconds(self) -> float | None: ...

    def out_of_time(self, where: str) -> BudgetExhausted: ...


class PhaseFrame(Protocol):
    """What the phase runner touches: the state, records, clock and tracer, and where the run stands."""

    @property
    def state(self) -> RunState: ...

    @property
    def record(self) -> Recorder: ...

    @property
    def clock(self) -> ClockPort: ...

    @property
    def tracer(self) -> TracerPort: ...

    @property
    def stage(self) -> Stage: ...

    @property
    def label(self) -> PassPhase: ...


class CallingRun(PhaseFrame, ToolTurn, Protocol):
    """What the LLM gateway touches: every check and count an LLM call passes through — the context guard, the
    caps and the meter, the deadline, the redactor, and where the run stands for the records."""

    @property
    def guard(self) -> ContextGuard: ...

    @property
    def meter(self) -> BudgetMeter: ...

    @property
    def redactor(self) -> Redactor: ...

    @property
    def phase(self) -> Phase: ...

    def check_caps(self, where: str, *, needs_llm: bool = True) -> None: ...
