"""The run use case every front door calls (Runs.start): the one rule for durable-or-not, the approval wiring, the
checks made before a run may spend anything, then one call on a DurableRuns port — DBOS's, or InProcessRuns (the
port without a record: `--no-durable`, tests). Also the check an edited tool call gets before it is sent."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from aeon.application.errors import InputError
from aeon.application.ports import ApproverPort, ProgressPort, ToolPort
from aeon.application.results import RunResult
from aeon.domain.approval import ApprovalDecision
from aeon.domain.plan import Plan
from aeon.domain.records import LostRecords
from aeon.domain.tools import ToolSpec

T = TypeVar("T")


def schema_problem(tools: ToolPort, tool: str, args: dict[str, Any]) -> str | None:
    """Why `args` do not fit `tool`'s input schema, or None: the argument check every step's call gets (the kernel
    checks an edited call with it again)."""
    from aeon.application.plans.validation import args_problems

    spec = tools.get(tool)
    if spec is None:
        return f"tool {tool!r} is not registered"
    return "; ".join(args_problems(spec, args)) or None


NEEDS_RECORD = (
    "a tool call in this run may need approval and nobody can be asked here: only a durable run can wait on the "
    "record for aeon approve / aeon deny"
)


def durable_wanted(said: bool | None, *, configured: bool, needs_record: bool) -> bool:
    """The one rule every front door follows for "durable or not": what the caller said (`--durable/--no-durable`,
    `durable=` of the Python API and of `aeon mcp`'s run), else the config's `durable.enabled`. A run that may need a
    decision nobody here can give (`needs_record`) is durable unless the caller said it must not be: that is refused
    (InputError, exit 2) before anything starts, never overridden."""
    if said is not None:
        if not said and needs_record:
            raise InputError(f"{NEEDS_RECORD}; it was asked not to be durable (drop --no-durable / durable: false)")
        return said
    return configured or needs_record


def may_need_approval(specs: Sequence[ToolSpec], plan: Plan | None) -> bool:
    """Whether a run may call a tool that needs approval: a registered tool says so, or a step of the given plan."""
    return any(s.requires_approval for s in specs) or (
        plan is not None and any(s.requires_approval for s in plan.steps)
    )


# (run id, request, plan document, progress, approver) -> the run's outcome (a result, or one to await)
Execute = Callable[[str, str, str | None, ProgressPort | None, ApproverPort | None], T]


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
    ) -> T:
        result = self._execute(run_id, request, plan, progress, approver)
        self._done[run_id] = result
        return result

    def resume(self, run_id: str, *, rerun_unsafe: bool = False) -> T:
        raise InputError(f"run {run_id} was not durable: nothing recorded it to go on with (run it again)")

    def fork(
        self, run_id: str, from_pass: int, *, config: str | None = None, progress: ProgressPort | None = None
    ) -> T:
        raise InputError(f"run {run_id} was not durable: it recorded no pass to replay from")

    def answer(self, run_id: str, decision: ApprovalDecision, *, go_on: bool) -> T | None:
        raise InputError(f"run {run_id} is not waiting for approval (a run that is not durable waits on nobody)")

    def list(self, limit: int = 100) -> Sequence[T]:
        return list(reversed(self._done.values()))[:limit]

    def outcome(self, run_id: str) -> T | None:
        return self._done.get(run_id)


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
    approve=); `progress`: this process's display of the run."""

    request: str
    plan: Plan | None = None
    durable: bool | None = None
    approver: ApproverPort | None = None
    progress: ProgressPort | None = None
    on_record: bool = True


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
    ) -> Any: ...


# the checks before a run (plan, durable) — the model can run here, the log takes its first record — as a context
# the in-process run executes in (its resources open), or closed before a durable run starts (it opens its own)
Preflight = Callable[[Plan | None, bool], AbstractAsyncContextManager[Checked]]


@dataclass(frozen=True)
class Runs:
    """The run use case: `start(command)` decides durable-or-not by the one rule (durable_wanted; `configured` is
    the config's durable.enabled, for a run another process can rebuild), makes the checks of `preflight`, then
    starts the run on `durable()` or `in_process`, as run `new_id()`, and returns its result with the checks' note
    among its warnings. `forced` is told when the rule makes a run durable that the config did not. Raises what the
    checks and the port raise (InputError, ConfigurationError, EventLogUnavailable …) before the run starts."""

    tools: ToolPort
    configured: bool
    preflight: Preflight
    in_process: Starts
    durable: Callable[[], Starts]
    forced: Callable[[], None] = lambda: None
    new_id: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))

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
        async with self.preflight(command.plan, durable) as checked:
            outcome = self._start(command, durable=durable)
            result: RunResult = await outcome if inspect.isawaitable(outcome) else outcome
        return _noted(result, checked)

    def run(self, command: RunCommand, *, run_async: Callable[[Coroutine[Any, Any, Any]], Any]) -> RunResult:
        """`start` for a door without an event loop (the CLI): each async part run by `run_async` (asyncio.run), a
        durable run's blocking wait in this thread, outside any loop (Ctrl-C and SIGTERM are this thread's)."""
        durable = self.durable_for(command)
        if not durable:
            result: RunResult = run_async(self.started(command, durable=False))
            return result
        checked: Checked = run_async(self._checked(command.plan))
        return _noted(self._start(command, durable=True), checked)

    async def _checked(self, plan: Plan | None) -> Checked:
        async with self.preflight(plan, True) as checked:
            return checked

    def _start(self, command: RunCommand, *, durable: bool) -> Any:
        port = self.durable() if durable else self.in_process
        return port.start(
            self.new_id(),
            command.request,
            plan=plan_text(command.plan),
            progress=command.progress,
            approver=command.approver,
            leave_when_waiting=command.approver is None,
        )


def _noted(result: RunResult, checked: Checked) -> RunResult:
    if checked.lost is not None:  # after the log closed: its last flush may lose records too
        result = result.with_lost_records(checked.lost)
    if checked.note:
        result.warnings.append(checked.note)
    return result
