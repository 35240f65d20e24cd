"""The recorder of a durable run: each call made a DBOS step under a stable key, deferred answers carried to the
run's end, and what the record already holds read back when the run executes again (steps.py records through it)."""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from dbos import DBOS


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
    """The part of the replay-aware log the steps use: where its numbering is, jumping ahead, and being told
    whether the run executes for the first time (its first recorded step ran) or again (it came from the record)."""

    def mark(self) -> int: ...

    def jump(self, seq: int) -> None: ...

    def settle(self, *, again: bool) -> None: ...

    def holding(self) -> bool: ...


Runner = Callable[[str, Callable[[], Awaitable[Any]]], Awaitable[Any]]
# A step's output as DBOS keeps it: the output, the log's seq after it, the pure tools' digests since the step
# before, and the outputs deferred since then, each (step name, output, seq): made before this step, written with it


Written = tuple[Any, int, list[str], list[tuple[str, Any, int]]]


END_STEP = "end"


async def dbos_step(name: str, fn: Callable[[], Awaitable[Any]]) -> Any:
    """One DBOS step named `name`: run once, its output recorded; on re-execution the record is returned."""
    return await DBOS.run_step_async({"name": name}, fn)


def recorded_outputs(steps: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    """A run's recorded outputs by step name, in the order they were made: the outputs a written step carries
    (deferred before it), then its own. DBOS's own operations (events, messages) are left out."""
    made: list[tuple[str, Any]] = []
    for step in steps:
        value = step.get("output")
        if isinstance(value, tuple | list) and len(value) >= 3:
            made += [(name, output) for name, output, _ in _carried_by(value)]
            made.append((str(step["function_name"]), value[0]))
    return made


def _carried_by(value: Any) -> list[tuple[str, Any, int]]:
    """The deferred outputs a written step's recorded value carries (none for DBOS's own operations)."""
    if isinstance(value, tuple | list) and len(value) > 3 and isinstance(value[3], list):
        return [(str(name), output, int(seq)) for name, output, seq in value[3]]
    return []


class Recorder:
    """A run's recorded steps. Each keeps, beside its output, the log's seq after it (a re-executed run numbers its
    log records as the first execution did) and the digests of the pure tool results computed since the step before
    it: a pure tool is not recorded but computed again when the run executes again, and the next recorded step tells
    whether it gave the same result (`diverged` says which did not; the run goes on with what it computed).

    An output that is cheaper to make again than to write — answers that came at once, a pass's checkpoint — may be
    deferred: kept here and written with the next step that has to be written (one that starts a tool with effects,
    a slow answer, a wait for approval), or returned by `finish` for the run's outcome. A crash before that step
    loses it, and the run, executed again, makes it again: nothing written after it can rest on it. `defer` bounds
    what a crash can cost: an output waits only while the outputs waiting took less than that many seconds to make
    in all. Deferring needs to know the record before the first call (`start`): whether the run executes for the
    first time, or again — then which outputs the record holds, as steps of their own or carried by others."""

    def __init__(
        self, log: SeqLog, *, step: Runner = dbos_step, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.cursor = Cursor()
        self._log, self._step, self._clock = log, step, clock
        self._computed: list[str] = []
        self._pending: list[tuple[str, Any, int]] = []
        self._at_stake = 0.0  # seconds it took to make the outputs pending
        self._written: set[str] | None = None  # the steps on the record; None: not known, so nothing is deferred
        self._carried: dict[str, tuple[Any, int]] = {}
        self.diverged: list[str] = []

    def start(self, steps: Sequence[Mapping[str, Any]] = (), *, again: bool | None) -> None:
        """Before the run's first call: the steps DBOS holds for it (none when it executes for the first time).
        `again`: True, the log may hold records of the run already, so it is read for them; False, it cannot, and
        records are written as they come; None, the log holds them until the run's first written step settles it
        (a run from a queue, which wrote no record of its own before its first step)."""
        self._written = {str(s["function_name"]) for s in steps}
        for step in steps:
            self._carried.update((name, (output, seq)) for name, output, seq in _carried_by(step.get("output")))
        if again is not None:
            self._log.settle(again=again)

    async def record(self, name: str, fn: Callable[[], Awaitable[Any]], *, defer: float = 0.0) -> tuple[Any, bool]:
        """`fn` as the step `name`: its output, and whether it ran now (False: it came from the record). With
        `defer` > 0 its output waits for the next written step if, with it, the outputs waiting took less than
        `defer` seconds to make."""
        if (carried := self._carried.pop(name, None)) is not None:
            output, seq = carried
            self._log.jump(seq)
            return output, False
        if defer > 0 and self._written is not None and name not in self._written:
            timed = math.isfinite(defer)  # an unbounded one (a checkpoint) is free to make again: not timed
            began = self._clock() if timed else 0.0
            made = await fn()
            took = self._clock() - began if timed else 0.0
            if self._at_stake + took < defer:
                self._pending.append((name, made, self._log.mark()))
                self._at_stake += took
                return made, True
            fn = _made(made)
        return await self._write(name, fn)

    async def _write(self, name: str, fn: Callable[[], Awaitable[Any]]) -> tuple[Any, bool]:
        computed, self._computed = self._computed, []
        pending, self._pending, self._at_stake = self._pending, [], 0.0
        executed = False

        async def body() -> Written:
            nonlocal executed
            executed = True
            output = await fn()
            return output, self._log.mark(), computed, pending

        output, seq, recorded, *_ = await self._step(name, body)
        self._log.settle(again=not executed)
        if not executed:
            self._log.jump(seq)
            self.diverged += [_diverged(now) for now, then in zip(computed, recorded, strict=False) if now != then]
        return output, executed

    async def flush(self) -> None:
        """Write what waits to be written, before the run waits on something outside its steps (a decision)."""
        name = f"carry {self.cursor.next_key()}"
        if self._pending or (self._written is not None and name in self._written):
            await self._write(name, _nothing)

    async def finish(self) -> list[tuple[str, Any]]:
        """At the run's end: the deferred outputs the outcome keeps (checkpoints: what replay forks from). A run
        whose log still holds its records (it wrote no step, and is not known to execute for the first time)
        writes one step first, so that an execution after a crash here reads the log for them."""
        if self._log.holding() or (self._written is not None and END_STEP in self._written):
            await self._write(END_STEP, _nothing)
        kept, self._pending = self._pending, []
        return [(name, output) for name, output, _ in kept if name.startswith("checkpoint ")]

    def computed(self, key: str, tool: str, result: bytes) -> None:
        """A pure tool's (redacted, encoded) result at `key`, checked against the record by the next step."""
        self._computed.append(f"{key} {tool} {hashlib.blake2b(result, digest_size=16).hexdigest()}")


def _made(output: Any) -> Callable[[], Awaitable[Any]]:
    async def made() -> Any:
        return output

    return made


async def _nothing() -> None:
    return None


def _diverged(entry: str) -> str:
    key, tool, _ = entry.split(" ", 2)
    return (
        f"tool {tool!r} ({key}) is declared pure but gave another result when the run executed again after a "
        "stop: the run went on with the new result, and answers recorded after it may rest on the first one"
    )
