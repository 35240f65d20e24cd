"""The DurableRuns port without a record: a run in this process only (`--no-durable`, the Python API's in-process
runs, tests)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

from aeon.application.errors import InputError
from aeon.application.ports import ApproverPort, ProgressPort
from aeon.domain.approval import ApprovalDecision
from aeon.domain.threads import ThreadContext

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Execute(Protocol[T_co]):
    """(run id, request, plan document, progress, approver[, thread]) -> the run's outcome (a result, or one to
    await); `thread` is passed only to a run of a thread."""

    def __call__(
        self,
        run_id: str,
        request: str,
        plan: str | None,
        progress: ProgressPort | None,
        approver: ApproverPort | None,
        thread: ThreadContext | None = None,
        /,
    ) -> T_co: ...


class InProcessRuns(Generic[T]):
    """The DurableRuns port without a record (`--no-durable`, tests): a run executes in this process only, and what
    it did is known to this process while it lives; nothing can be resumed, forked or answered from elsewhere.
    `execute` gives the run's outcome: its RunResult, or (an async door) an awaitable of it."""

    def __init__(self, execute: Execute[T]) -> None:
        self._execute = execute
        self._done: dict[str, T] = {}

    def start(
        self,
        run_id: str,
        request: str,
        *,
        plan: str | None = None,
        config: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        progress: ProgressPort | None = None,
        approver: ApproverPort | None = None,
        leave_when_waiting: bool = False,
        thread: ThreadContext | None = None,
    ) -> T:
        given = (thread,) if thread is not None else ()
        result = self._execute(run_id, request, plan, progress, approver, *given)
        self._done[run_id] = result
        return result

    def resume(self, run_id: str, *, rerun_unsafe: bool = False) -> T:
        raise InputError(f"run {run_id} was not durable: nothing recorded it to go on with (run it again)")

    def fork(
        self,
        run_id: str,
        from_pass: int,
        *,
        config: str | None = None,
        progress: ProgressPort | None = None,
        new_id: str | None = None,
    ) -> T:
        raise InputError(f"run {run_id} was not durable: it recorded no pass to replay from")

    def answer(self, run_id: str, decision: ApprovalDecision, *, go_on: bool) -> T | None:
        raise InputError(f"run {run_id} is not waiting for approval (a run that is not durable waits on nobody)")

    def list(self, limit: int = 100) -> Sequence[T]:
        return list(reversed(self._done.values()))[:limit]

    def outcome(self, run_id: str) -> T | None:
        return self._done.get(run_id)
