"""The run use case every front door calls (Runs.start): the one rule for durable-or-not, the approval wiring, the
checks made before a run may spend anything, then one call on a DurableRuns port — DBOS's, or InProcessRuns."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from aeon.application.errors import InputError
from aeon.application.ports import ApproverPort, ProgressPort, ToolPort
from aeon.application.results import RunResult
from aeon.application.runs.rule import durable_wanted, may_need_approval
from aeon.application.threads import Threads
from aeon.domain.plan import Plan
from aeon.domain.records import LostRecords
from aeon.domain.threads import ThreadContext


def plan_text(plan: Plan | None) -> str | None:
    """A plan as it crosses a DurableRuns port: its JSON document."""
    return msgspec.json.encode(plan).decode() if plan is not None else None


def plan_of(text: str | None) -> Plan | None:
    """The plan a DurableRuns port was given (a fresh copy: the run changes its own)."""
    return msgspec.json.decode(text, type=Plan) if text is not None else None


@dataclass(frozen=True)
class RunCommand:
    """One run as a front door asks for it. `durable`: what the caller said (None: the config decides);
    `approver`: who decides here on a tool call that needs approval (a terminal, a callback), None: nobody here;
    `on_record`: such a call nobody here can decide waits on the record (False: it is denied — aeon.run without
    approve=); `progress`: this process's display of the run; `thread`: the thread the run belongs to (it sees the
    thread's conversation so far and memory, and leaves its turn there)."""

    request: str
    plan: Plan | None = None
    durable: bool | None = None
    approver: ApproverPort | None = None
    progress: ProgressPort | None = None
    on_record: bool = True
    thread: str | None = None


@dataclass
class Checked:
    """What the checks before a run found: a note on the run (a scripted model answers its own script), and the
    records an in-process run's log lost (known once the log has closed)."""

    note: str | None = None
    lost: LostRecords | None = None


class Starts(Protocol):
    """The one call the run use case makes on a DurableRuns port (DbosRuns, InProcessRuns, a door's durable start);
    its outcome is the run's result, or an awaitable of it."""

    def start(
        self,
        run_id: str,
        request: str,
        *,
        plan: str | None = None,
        progress: ProgressPort | None = None,
        approver: ApproverPort | None = None,
        leave_when_waiting: bool = False,
        thread: ThreadContext | None = None,
    ) -> Any: ...


# the checks before a run (plan, durable) — the model can run here, the log takes its first record — as a context
# the in-process run executes in (its resources open), or closed before a durable run starts (it opens its own)
Preflight = Callable[[Plan | None, bool], AbstractAsyncContextManager[Checked]]


@dataclass(frozen=True)
class Runs:
    """The run use case: `start(command)` decides durable-or-not by the one rule (durable_wanted; `configured` is
    the config's durable.enabled, for a run another process can rebuild), makes the checks of `preflight`, then
    starts the run on `durable()` or `in_process`, as run `new_id()`, and returns its result with the checks' note
    among its warnings. `forced` is told when the rule makes a run durable that the config did not. A run of a thread
    is given the thread's context by `threads`; an in-process run leaves its turn there once it ends (a durable run
    does so where it ends: adapters/durable/workflow). Raises what the checks and the port raise (InputError,
    ConfigurationError, EventLogUnavailable …) before the run starts."""

    tools: ToolPort
    configured: bool
    preflight: Preflight
    in_process: Starts
    durable: Callable[[], Starts]
    forced: Callable[[], None] = lambda: None
    new_id: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    threads: Callable[[], Threads] | None = None

    def durable_for(self, command: RunCommand) -> bool:
        nobody = command.approver is None and command.on_record
        needs = nobody and may_need_approval(self.tools.list(), command.plan)
        wanted = durable_wanted(command.durable, configured=self.configured, needs_record=needs)
        if wanted and command.durable is None and not self.configured:
            self.forced()
        return wanted

    async def start(self, command: RunCommand) -> RunResult:
        return await self.started(command, durable=self.durable_for(command))

    async def started(self, command: RunCommand, *, durable: bool) -> RunResult:
        """`start` once durable-or-not is decided."""
        context = self._context(command)
        async with self.preflight(command.plan, durable) as checked:
            outcome = self._start(command, durable=durable, thread=context)
            result: RunResult = await outcome if inspect.isawaitable(outcome) else outcome
        if not durable:
            self._remember(command, result)
        return _noted(result, checked)

    def run(self, command: RunCommand, *, run_async: Callable[[Coroutine[Any, Any, Any]], Any]) -> RunResult:
        """`start` for a door without an event loop (the CLI): each async part run by `run_async` (asyncio.run), a
        durable run's blocking wait in this thread, outside any loop (Ctrl-C and SIGTERM are this thread's)."""
        durable = self.durable_for(command)
        if not durable:
            result: RunResult = run_async(self.started(command, durable=False))
            return result
        context = self._context(command)
        checked: Checked = run_async(self._checked(command.plan))
        return _noted(self._start(command, durable=True, thread=context), checked)

    async def _checked(self, plan: Plan | None) -> Checked:
        async with self.preflight(plan, True) as checked:
            return checked

    def _context(self, command: RunCommand) -> ThreadContext | None:
        if command.thread is None:
            return None
        if self.threads is None:
            raise InputError("threads are not available at this door")
        return self.threads().context(command.thread)

    def _remember(self, command: RunCommand, result: RunResult) -> None:
        if command.thread is not None and self.threads is not None:
            self.threads().record(command.thread, result)

    def _start(self, command: RunCommand, *, durable: bool, thread: ThreadContext | None) -> Any:
        port = self.durable() if durable else self.in_process
        given = {"thread": thread} if thread is not None else {}  # a door's port that knows no thread still serves
        return port.start(
            self.new_id(),
            command.request,
            plan=plan_text(command.plan),
            progress=command.progress,
            approver=command.approver,
            leave_when_waiting=command.approver is None and command.on_record,
            **given,
        )


def _noted(result: RunResult, checked: Checked) -> RunResult:
    if checked.lost is not None:  # after the log closed: its last flush may lose records too
        result = result.with_lost_records(checked.lost)
    if checked.note:
        result.warnings.append(checked.note)
    return result
