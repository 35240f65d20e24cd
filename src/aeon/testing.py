"""Test doubles for testing your own tools, configs and plans with Aeon, without a model or a clock.

- `FunctionLLM`: a model whose answer to each call is what your function returns (pydantic-ai's FunctionModel).
- `answers(*texts)`: a model that answers calls in order, and records what it was asked.
- `FakeClock`: time that moves only when read, advanced or slept on; `slept` lists the waits asked for.
- `ListLog`, `ListProgress`: the event log and the live progress as lists.
- `orchestrator(...)`: an Orchestrator built by Aeon's own container with these doubles in place of its ports.
- `new_run(...)`: one run's collaborators, to test a single service (a planner, a convergence engine) on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import msgspec

from aeon.adapters.llm.expected import calls as _calls
from aeon.adapters.llm.expected import expected_answer
from aeon.application.errors import ScriptExhausted
from aeon.application.kernel.orchestrator import Orchestrator
from aeon.application.kernel.run import Run, RunSettings
from aeon.application.ports import ApproverPort, CheckpointPort, MemoryPort, ProgressPort, ToolPort, TracerPort
from aeon.domain.budget import BudgetState
from aeon.domain.context import INPUTS, required
from aeon.domain.llm import Completion, Message, ModelInfo, Usage
from aeon.domain.log_records import STAMPS, LogRecord
from aeon.domain.phases import Stage
from aeon.domain.progress import ProgressEvent
from aeon.domain.records import LostRecords
from aeon.domain.run_state import RunState
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.container import run_scope

__all__ = ["FakeClock", "FunctionLLM", "LLMCall", "ListLog", "ListProgress", "answers", "new_run", "orchestrator"]

E = TypeVar("E")


class LLMCall(msgspec.Struct, frozen=True, kw_only=True):
    """What one call asked: the messages, the schema and its name, the token limit and stop sequences."""

    messages: list[Message]
    schema: dict[str, Any] | None
    schema_name: str
    max_tokens: int | None
    stop: list[str]

    @property
    def prompt(self) -> str:
        return self.messages[-1].content if self.messages else ""


class FunctionLLM:
    """An LLMPort answering each call with `fn(call)`: a string, a Completion, or an exception to raise."""

    def __init__(self, fn: Callable[[LLMCall], str | Completion | Exception], *, name: str = "function") -> None:
        self._fn = fn
        self._name = name
        self.calls: list[LLMCall] = []

    def describe(self) -> ModelInfo:
        return ModelInfo(
            adapter="function", model=self._name, dialect="test", dialect_source="aeon.testing", provider="test"
        )

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
        max_tokens: int | None = None,
        stop: Sequence[str] = (),
    ) -> Completion:
        call = LLMCall(
            messages=list(messages),
            schema=dict(schema) if schema is not None else None,
            schema_name=schema_name,
            max_tokens=max_tokens,
            stop=list(stop),
        )
        self.calls.append(call)
        answer = self._fn(call)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, Completion):
            return answer
        usage = Usage(
            prompt_tokens=max(1, sum(len(m.content) for m in messages) // 4), completion_tokens=len(answer) // 4
        )
        return Completion(text=answer, usage=usage, finish_reason="stop", model=self._name)

    async def aclose(self) -> None:
        return None


def answers(*texts: str | Exception) -> FunctionLLM:
    """A model answering calls in order; one call too many raises ScriptExhausted saying which answer that call
    asked for (profile and plan, evaluation, refinement, a reasoning step …) and a JSON example of its shape."""
    queue = list(texts)

    def next_answer(call: LLMCall) -> str | Exception:
        if not queue:
            wanted = expected_answer(len(texts) + 1, call.messages, call.schema_name, call.schema)
            return ScriptExhausted(f"the test model ran out of answers after {_calls(len(texts))}: {wanted}")
        return queue.pop(0)

    return FunctionLLM(next_answer, name="answers")


class FakeClock:
    """Advances a fixed amount on every reading; never touches the real clock. `sleep` only moves it on."""

    def __init__(self, step: float = 0.001, start: datetime | None = None) -> None:
        self._t = 0.0
        self._step = step
        self._start = start or datetime(2026, 1, 1, tzinfo=UTC)
        self.slept: list[float] = []

    def now(self) -> datetime:
        self._t += self._step
        return self._start + timedelta(seconds=self._t)

    def monotonic(self) -> float:
        self._t += self._step
        return self._t

    def advance(self, seconds: float) -> None:
        self._t += seconds

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self._t += seconds


class ListLog:
    """A LoggerPort keeping its records in memory: `records` as given, `events` as (event, fields) the way a log
    file holds them (Structs and enums as JSON values, the stamps left out)."""

    def __init__(self) -> None:
        self.records: list[LogRecord] = []
        self.events: list[tuple[str, dict[str, Any]]] = []

    def open(self) -> None:
        return None

    def bind(self, correlation_id: str) -> None:
        return None

    def emit(self, record: LogRecord) -> None:
        self.records.append(record)
        fields = msgspec.json.decode(msgspec.json.encode(record, enc_hook=str))
        for stamp in STAMPS:
            fields.pop(stamp, None)
        self.events.append((record.event, fields))

    def lost(self) -> LostRecords | None:
        return None

    def close(self) -> None:
        return None

    def kinds(self) -> list[str]:
        return [e for e, _ in self.events]

    def of(self, event: str) -> list[dict[str, Any]]:
        return [fields for e, fields in self.events if e == event]


class ListProgress:
    """A ProgressPort keeping the events it is shown, in order (as a display gets them: redacted)."""

    def __init__(self) -> None:
        self.events: list[ProgressEvent] = []

    def update(self, event: ProgressEvent) -> None:
        self.events.append(event)

    def of(self, kind: type[E]) -> list[E]:
        """The events of one type, in order: `progress.of(StepStarted)`."""
        return [e for e in self.events if isinstance(e, kind)]

    def kinds(self) -> list[str]:
        """The events' type names in order, as their JSON `type` tags say them."""
        return [type(e).__name__ for e in self.events]


def orchestrator(
    llm: FunctionLLM | Any,
    *,
    run: RunSettings | None = None,
    settings: Settings | None = None,
    tools: ToolPort | None = None,
    memory: MemoryPort | None = None,
    log: Any = None,
    progress: ProgressPort | None = None,
    clock: Any = None,
    checkpoint: CheckpointPort | None = None,
    tracer: TracerPort | None = None,
    approver: ApproverPort | None = None,
) -> Orchestrator:
    """An Orchestrator from Aeon's container (built-in tools, in-memory memory), its ports replaced by the doubles
    given; a ListLog, a ListProgress and a FakeClock when none are. `approver` decides on tool calls that need
    approval (aeon.adapters.approval.CallbackApprover wraps a function); without one, such calls are denied."""
    return run_scope(
        settings,
        run=run or RunSettings(),
        llm=llm,
        tools=tools,
        memory=memory,
        logger=log if log is not None else ListLog(),
        progress=progress if progress is not None else ListProgress(),
        clock=clock if clock is not None else FakeClock(),
        checkpoint=checkpoint,
        tracer=tracer,
        approver=approver,
    )


def new_run(
    request: str = "test request",
    *,
    settings: RunSettings | None = None,
    stage: Stage = Stage.PROFILE_AND_PLAN,
    log: Any = None,
    progress: ProgressPort | None = None,
    clock: Any = None,
) -> Run:
    """One run's collaborators (state, meter, recorder, guard, clock), standing at `stage` of pass 1 with a
    well-formed context, for testing a service on its own."""
    s = settings or RunSettings()
    limits = s.limits()
    clock = clock if clock is not None else FakeClock()
    state = RunState(
        correlation_id="test-run",
        request=request,
        started_at=clock.now().isoformat(),
        budget=BudgetState.start(limits),
        pass_number=1,
        in_cycle=True,
        next_stage=stage,
    )
    run = Run(state, logger=log if log is not None else ListLog(), progress=progress or ListProgress(), clock=clock)
    run.enter(INPUTS[stage](**{name: _PLACEHOLDER[name] for name in required(stage)}))
    return run


# Stand-ins for a stage's inputs: the guard checks only that they are there.
_PLACEHOLDER: dict[str, Any] = {
    "task_profile": "test profile",
    "initial_plan": "test plan",
    "refined_plan": "test plan",
    "plan_state": "test plan",
    "execution_results": {"s1": "done"},
    "evaluation_results": "test evaluation",
}
