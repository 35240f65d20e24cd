"""LLM calls, tool calls and phase checkpoints as DBOS steps, each recorded once under a stable key.

The key is the run id (the workflow id), the pass, the stage and the call number within that stage:
`llm p2.C1.3` is the fourth call of stage C1 in pass 2. DBOS checks on re-execution that the step recorded at each
position carries the same name, so a re-executed run that strays from its record stops instead of mapping answers
to the wrong calls.

What a step records is redacted first (the run's Redactor): the system database never holds a secret, and the run
goes on with the recorded (redacted) answer, so a first execution and a re-execution see the same text.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import msgspec
from dbos import DBOS

from aeon.application.ports import LLMPort, ToolPort
from aeon.application.redaction import NO_SECRETS, Redactor
from aeon.domain.errors import AeonError
from aeon.domain.llm import Completion, Message
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


class Cursor:
    """Where the run is: pass and stage (set at every phase boundary) and the calls made since."""

    def __init__(self) -> None:
        self.pass_number, self.stage, self.calls = 0, "start", 0

    def at(self, pass_number: int, stage: str) -> None:
        self.pass_number, self.stage, self.calls = pass_number, stage, 0

    def next_key(self) -> str:
        key = f"p{self.pass_number}.{self.stage}.{self.calls}"
        self.calls += 1
        return key


class SeqLog(Protocol):
    """The part of the replay-aware log the steps use: where its numbering is, and jumping ahead."""

    def mark(self) -> int: ...

    def jump(self, seq: int) -> None: ...


Runner = Callable[[str, Callable[[], Awaitable[Any]]], Awaitable[Any]]


async def dbos_step(name: str, fn: Callable[[], Awaitable[Any]]) -> Any:
    """One DBOS step named `name`: run once, its output recorded; on re-execution the record is returned."""
    return await DBOS.run_step_async({"name": name}, fn)


class DurableLLM:
    """An LLMPort whose every call is a step `llm <key>`: a recorded answer (or error) is never asked again.

    The step's record keeps the log's seq after the call, so a re-executed run numbers its log records as the first
    execution did. A model with a `skip` hook (the scripted one) is told about each answer taken from the record.
    """

    def __init__(
        self, inner: LLMPort, cursor: Cursor, log: SeqLog, *, step: Runner = dbos_step, redactor: Redactor = NO_SECRETS
    ) -> None:
        self._inner, self._cursor, self._log, self._step = inner, cursor, log, step
        self._redactor = redactor
        self.replayed = 0

    def describe(self) -> dict[str, str]:
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
        executed = False

        async def call() -> tuple[str | None, AeonError | None, int]:
            nonlocal executed
            executed = True
            try:
                done = await self._inner.complete(
                    messages, schema=schema, schema_name=schema_name, max_tokens=max_tokens, stop=stop
                )
            except AeonError as exc:  # a port error is an outcome too: recorded, raised again on re-execution
                return None, redacted_error(exc, self._redactor), self._log.mark()
            return self._redactor.json(msgspec.json.encode(done)).decode(), None, self._log.mark()

        text, error, seq = await self._step(f"llm {self._cursor.next_key()}", call)
        if not executed:
            self.replayed += 1
            self._log.jump(seq)
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
    """A ToolPort whose every call is a step `tool <key> <name>`. A tool that is not idempotent is preceded by a
    step `tool-start <key> <name>`: found recorded without its result on re-execution, the tool was cut off by a
    crash, and the run stops (UnsafeToolInFlight) unless `rerun_unsafe` allows running it again, or `supplied`
    gives (tool, key) the output the operator found it had: recorded as the call's result, the tool not run."""

    def __init__(
        self,
        inner: ToolPort,
        cursor: Cursor,
        log: SeqLog,
        *,
        idempotent: Callable[[str], bool],
        recorded: Callable[[], Awaitable[set[str]]],
        rerun_unsafe: bool = False,
        supplied: Supplier | None = None,
        step: Runner = dbos_step,
        redactor: Redactor = NO_SECRETS,
    ) -> None:
        self._inner, self._cursor, self._log, self._step = inner, cursor, log, step
        self._redactor = redactor
        self._idempotent, self._recorded, self._rerun_unsafe = idempotent, recorded, rerun_unsafe
        self._supplied = supplied

    def list(self) -> list[ToolSpec]:
        return self._inner.list()

    def get(self, name: str) -> ToolSpec | None:
        return self._inner.get(name)

    async def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float | None = None) -> ToolResult:
        key = self._cursor.next_key()
        step_name = f"tool {key} {name}"
        given: ToolResult | None = None
        if not self._idempotent(name):
            started = False

            async def mark() -> bool:
                nonlocal started
                started = True
                return True

            await self._step(f"tool-start {key} {name}", mark)
            careful = self._supplied is not None or not self._rerun_unsafe
            if not started and careful and step_name not in await self._recorded():
                if self._supplied is None:
                    raise UnsafeToolInFlight(name, key)
                given = ToolResult(output=await self._supplied(name, key), supplied_by="operator")
        executed = False

        async def call() -> tuple[str, int]:
            nonlocal executed
            executed = True
            result = given if given is not None else await self._inner.invoke(name, args, time_left=time_left)
            return self._redactor.json(msgspec.json.encode(result)).decode(), self._log.mark()

        text, seq = await self._step(step_name, call)
        if not executed:
            self._log.jump(seq)
        return msgspec.json.decode(text, type=ToolResult)


class DurableCheckpoint:
    """A CheckpointPort: the run state at every phase boundary, recorded as a step `checkpoint p<pass> <stage>`
    (what `aeon replay --from-pass` forks from); it also moves the cursor, so call keys restart at each phase."""

    def __init__(
        self, cursor: Cursor, log: SeqLog, *, step: Runner = dbos_step, redactor: Redactor = NO_SECRETS
    ) -> None:
        self._cursor, self._log, self._step, self._redactor = cursor, log, step, redactor

    async def save(self, state: RunState) -> None:
        self._cursor.at(state.pass_number, state.next_stage.value)
        encoded = self._redactor.json(state.encode()).decode()

        async def keep() -> tuple[str, int]:
            return encoded, self._log.mark()

        _, seq = await self._step(checkpoint_step(state.pass_number, state.next_stage), keep)
        self._log.jump(seq)


def checkpoint_step(pass_number: int, stage: Stage) -> str:
    """The name of the step recording the run state at the boundary before `stage` of pass `pass_number`."""
    return f"checkpoint p{pass_number} {stage.value}"


def checkpoint_passes(step_names: Sequence[str]) -> dict[str, int]:
    """The checkpoint steps a run can hold among `step_names`, by exact name, with the pass each one starts (a run
    records at least one step per pass, so it has no more passes than steps): read back, never parsed."""
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
