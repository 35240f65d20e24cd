"""The threads use case: what a follow-up run is given of its thread, the turn a run leaves in it, and the thread
commands (`aeon threads`, `show`, `delete`; POST/GET/DELETE /threads). Every text a thread keeps is redacted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from aeon.application.errors import InputError
from aeon.application.ports import ThreadsPort
from aeon.application.redaction import Redactor
from aeon.application.results import RunResult
from aeon.domain.plan import StepStatus
from aeon.domain.provenance import TRUSTED, Label
from aeon.domain.text import cut
from aeon.domain.threads import (
    MemoryEntry,
    Thread,
    ThreadContext,
    ThreadLimits,
    ThreadSummary,
    Turn,
    as_json,
    bounded_value,
    context_of,
    number_for,
    valid_name,
    with_turn,
)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def checked_name(name: str) -> str:
    """`name`, or InputError saying why it cannot name a thread."""
    if (problem := valid_name(name)) is not None:
        raise InputError(problem)
    return name


@dataclass(frozen=True)
class Threads:
    """Threads on `store`: `context` before a run of a thread, `record` once it ended (idempotent by run id: a run
    re-executed after a crash leaves one turn), and the commands. Raises InputError for a bad or unknown name."""

    store: ThreadsPort
    redactor: Redactor
    limits: ThreadLimits = field(default_factory=ThreadLimits)
    now: Callable[[], str] = _now

    def context(self, name: str) -> ThreadContext:
        """What a run of thread `name` is given (a thread not made yet: nothing but its name)."""
        thread = self.store.load(checked_name(name))
        return context_of(thread, self.limits) if thread is not None else ThreadContext(name=name, conversation="")

    def joined(self, name: object) -> ThreadContext | None:
        """What a run a client asks for in thread `name` is given (None: no thread); InputError for a name that is
        not a thread's."""
        if name is None:
            return None
        if not isinstance(name, str):
            raise InputError("'thread' must be a thread's name (a string)")
        return self.context(name)

    def record(self, name: str, result: RunResult) -> Thread:
        """Run `result`'s turn and the memory it wrote, kept by thread `name` (redacted, bounded)."""
        at, limits = self.now(), self.limits

        def change(thread: Thread) -> Thread:
            number = number_for(thread, result.correlation_id)
            turn = self.turn(result, number, at)
            return with_turn(thread, turn, self.memory(result, number), limits)

        return self.store.update(checked_name(name), at, change)

    def turn(self, result: RunResult, number: int, at: str) -> Turn:
        sources = result.untrusted_sources
        label = Label(trusted=False, sources=tuple(sources)) if isinstance(sources, list) else TRUSTED
        answer = None if result.answer is None else cut(self.redactor.text(as_json(result.answer)), self.limits.chars)
        return Turn(
            run_id=result.correlation_id,
            number=number,
            request=cut(self.redactor.text(result.request), self.limits.chars),
            answer=answer,
            status=result.status.value,
            at=at,
            label=label,
        )

    def memory(self, result: RunResult, number: int) -> list[MemoryEntry]:
        """The step results the run left in its memory, as `t<number>.<step id>` entries of the thread."""
        steps = result.plan.steps if result.plan is not None else []
        return [
            MemoryEntry(
                key=f"t{number}.{step.step_id}",
                value=bounded_value(self.redactor.data(step.step_output), self.limits.chars),
                label=step.output_label,
            )
            for step in steps
            if step.status is StepStatus.COMPLETE
        ]

    def create(self, name: str) -> Thread:
        return self.store.create(checked_name(name), self.now())

    def list(self) -> list[ThreadSummary]:
        return self.store.list()

    def show(self, name: str) -> Thread:
        thread = self.store.load(checked_name(name))
        if thread is None:
            raise InputError(f"no thread named {name!r} (aeon threads lists them)")
        return thread

    def delete(self, name: str) -> None:
        if not self.store.delete(checked_name(name)):
            raise InputError(f"no thread named {name!r} (aeon threads lists them)")
