"""LLM calls, tool calls and a checkpoint per pass as DBOS steps, each recorded once under a stable key.

The key is the run id (the workflow id), the pass, the stage and the call number within that stage:
`llm p2.C1.3` is the fourth call of stage C1 in pass 2. DBOS checks on re-execution that the step recorded at each
position carries the same name, so a re-executed run that strays from its record stops instead of mapping answers
to the wrong calls. A pure tool's call is no step: it is computed again when the run executes again (it costs no
more than reading it back), and the next step's record holds its result's digest, to tell if it came out different.

What a step records is redacted first (the run's Redactor): the system database never holds a secret. The execution
that made a step goes on with the answer whole (what the model or the tool said, as a run in the process does), so
the caller that asked gets text that merely looks like a credential whole; a re-execution goes on with the record's
redacted answer. Configured secrets never reach either (the result handed back is redacted of them); every later
answer is read back from the record too, so a re-execution takes the same path.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import msgspec

from aeon.adapters.durable.recording import END_STEP as END_STEP
from aeon.adapters.durable.recording import Cursor as Cursor
from aeon.adapters.durable.recording import Recorder as Recorder
from aeon.adapters.durable.recording import recorded_outputs as recorded_outputs
from aeon.application.ports import LLMPort, ToolPort
from aeon.application.redaction import NO_SECRETS, Redactor
from aeon.domain.errors import AeonError
from aeon.domain.llm import Completion, Message, ModelInfo
from aeon.domain.phases import Stage
from aeon.domain.run_state import RunState
from aeon.domain.tools import ToolResult, ToolSpec

UNSAFE_CODE = "AEON.DURABLE.UNSAFE_TOOL_IN_FLIGHT"


class UnsafeToolInFlight(BaseException):
    """A non-idempotent tool call started before a crash and never recorded its result. A BaseException, so that
    no `except Exception` in the kernel turns it into a step failure: the run must stop here, untouched."""

    def __init__(self, tool: str, key: str) -> None:
        super().__init__(f"tool {tool!r} ({key}) was running when the run stopped and is not idempotent")
        self.tool, self.key = tool, key


class DurableLLM:
    """An LLMPort whose every call is a step `llm <key>`: a recorded answer (or error) is never asked again.

    Answers that came within `defer` seconds in all (a scripted model, a cache) are cheaper to ask again than to
    write one by one: they are written with the next written step (see Recorder). A model with a `skip` hook (the
    scripted one) is told about each answer taken from the record.
    """

    def __init__(
        self, inner: LLMPort, recorder: Recorder, *, redactor: Redactor = NO_SECRETS, defer: float = 0.0
    ) -> None:
        self._inner, self._recorder, self._redactor = inner, recorder, redactor
        self._defer = defer
        self.replayed = 0

    def describe(self) -> ModelInfo:
        return self._inner.describe()

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
        max_tokens: int | None = None,
        stop: Sequence[str] = (),
    ) -> Completion:
        fresh: list[Completion] = []  # the answer whole, when this execution asks

        async def call() -> tuple[str | None, AeonError | None]:
            try:
                done = await self._inner.complete(
                    messages, schema=schema, schema_name=schema_name, max_tokens=max_tokens, stop=stop
                )
            except AeonError as exc:  # a port error is an outcome too: recorded, raised again on re-execution
                return None, redacted_error(exc, self._redactor)
            fresh.append(done)
            return self._redactor.json(msgspec.json.encode(done)).decode(), None

        name = f"llm {self._recorder.cursor.next_key()}"
        (text, error), executed = await self._recorder.record(name, call, defer=self._defer)
        if executed and fresh:
            return fresh[0]
        if not executed:
            self.replayed += 1
            skip = getattr(self._inner, "skip", None)
            if callable(skip):
                skip(1)
        if error is not None:
            raise error
        assert text is not None
        return msgspec.json.decode(text, type=Completion)

    async def aclose(self) -> None:
        await self._inner.aclose()


Supplier = Callable[[str, str], Awaitable[Any]]


class DurableTools:
    """A ToolPort whose calls are steps `tool <key> <name>`, except a pure tool's: computed again on re-execution,
    its result's digest kept by the next recorded step. A tool that is not idempotent is preceded by a step
    `tool-start <key> <name>`: found recorded without its result on re-execution, the tool was cut off by a crash,
    and the run stops (UnsafeToolInFlight) unless `rerun_unsafe` allows running it again, or `supplied` gives
    (tool, key) the output the operator found it had: recorded as the call's result, the tool not run."""

    def __init__(
        self,
        inner: ToolPort,
        recorder: Recorder,
        *,
        idempotent: Callable[[str], bool],
        recorded: Callable[[], Awaitable[set[str]]],
        pure: Callable[[str], bool] = lambda _: False,
        rerun_unsafe: bool = False,
        supplied: Supplier | None = None,
        redactor: Redactor = NO_SECRETS,
    ) -> None:
        self._inner, self._recorder, self._redactor = inner, recorder, redactor
        self._idempotent, self._pure, self._recorded = idempotent, pure, recorded
        self._rerun_unsafe, self._supplied = rerun_unsafe, supplied

    def list(self) -> list[ToolSpec]:
        return self._inner.list()

    def get(self, name: str) -> ToolSpec | None:
        return self._inner.get(name)

    async def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float | None = None) -> ToolResult:
        key = self._recorder.cursor.next_key()
        if self._pure(name):  # computed on every execution: its digest is of the redacted result, as recorded
            result = await self._inner.invoke(name, args, time_left=time_left)
            self._recorder.computed(key, name, self._redactor.json(msgspec.json.encode(result)))
            return result
        step_name = f"tool {key} {name}"
        given: ToolResult | None = None
        if not self._idempotent(name):
            _, started = await self._recorder.record(f"tool-start {key} {name}", _started)
            careful = self._supplied is not None or not self._rerun_unsafe
            if not started and careful and step_name not in await self._recorded():
                if self._supplied is None:
                    raise UnsafeToolInFlight(name, key)
                given = ToolResult(output=await self._supplied(name, key), supplied_by="operator")

        fresh: list[ToolResult] = []  # the result whole, when this execution runs the tool

        async def call() -> str:
            result = given if given is not None else await self._inner.invoke(name, args, time_left=time_left)
            fresh.append(result)
            return self._redactor.json(msgspec.json.encode(result)).decode()

        text, executed = await self._recorder.record(step_name, call)
        return fresh[0] if executed and fresh else msgspec.json.decode(text, type=ToolResult)


async def _started() -> bool:
    return True


class DurableCheckpoint:
    """A CheckpointPort: the run state at the first phase boundary of every pass, recorded as
    `checkpoint p<pass> <stage>` (what `aeon replay --from-pass` forks from), deferred: written with the next written
    step, or kept by the run's outcome. Every boundary moves the cursor, so call keys restart at each phase; the
    other boundaries are not recorded: a re-execution rebuilds their state from the steps around them, and nothing
    reads it."""

    def __init__(self, recorder: Recorder, *, redactor: Redactor = NO_SECRETS) -> None:
        self._recorder, self._redactor = recorder, redactor
        self._pass: int | None = None

    async def save(self, state: RunState) -> None:
        self._recorder.cursor.at(state.pass_number, state.next_stage.value)
        if state.pass_number == self._pass:
            return
        self._pass = state.pass_number
        encoded = self._redactor.json(state.encode()).decode()

        async def keep() -> str:
            return encoded

        await self._recorder.record(checkpoint_step(state.pass_number, state.next_stage), keep, defer=math.inf)


def checkpoint_step(pass_number: int, stage: Stage) -> str:
    """The name of the step recording the run state at the boundary before `stage` of pass `pass_number`."""
    return f"checkpoint p{pass_number} {stage.value}"


def checkpoint_passes(step_names: Sequence[str]) -> dict[str, int]:
    """The checkpoint steps a run can hold among `step_names`, by exact name, with the pass each one starts (a run
    records one checkpoint per pass, so it has no more passes than steps): read back, never parsed."""
    return {checkpoint_step(p, stage): p for p in range(1, len(step_names) + 1) for stage in Stage}


def redacted_error(exc: AeonError, redactor: Redactor) -> AeonError:
    """The error as it is recorded (pickled, its message and string attributes) and raised again: redacted."""
    texts = [*map(str, exc.args), *(v for v in vars(exc).values() if isinstance(v, str))]
    if not any(redactor.may_hold(t.encode("utf-8", "surrogatepass")) for t in texts):
        return exc
    clean = copy.copy(exc)  # as pickle makes it: the class called with its args, then its attributes set
    clean.args = tuple(redactor.data(a) for a in exc.args)
    for name, value in vars(exc).items():
        if isinstance(value, str):
            setattr(clean, name, redactor.text(value))
    return clean


def in_flight_unsafe(step_names: Sequence[str]) -> tuple[str, str] | None:
    """The (tool, key) of a non-idempotent tool call started and never finished in a run's recorded steps."""
    done = {n for n in step_names if n.startswith("tool ")}
    for name in step_names:
        if name.startswith("tool-start "):
            _, key, tool = name.split(" ", 2)
            if f"tool {key} {tool}" not in done:
                return tool, key
    return None
