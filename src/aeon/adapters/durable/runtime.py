"""What a durable run records (its input, its outcome) and what the process executing it holds beyond the record:
one DurableRuntime per process, configured with how to compose a run (Aeon's container lives in the entrypoints),
holding the live objects that cannot cross the workflow boundary — progress, approver, waiters, the caller's result.

DBOS calls the workflow as a plain function, so the process's runtime is reached through `held()`: one instance,
registered by the first DbosProcess the process makes (adapters/durable/process.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from aeon.application.ports import ApproverPort, ProgressPort, ToolPort
from aeon.application.redaction import Redactor
from aeon.application.results import RunResult
from aeon.domain.approval import ApprovalDecision, Pending
from aeon.domain.plan import Plan
from aeon.domain.run_state import RunState
from aeon.domain.threads import ThreadContext

if TYPE_CHECKING:
    from aeon.adapters.durable.engine import DurableEngine
    from aeon.adapters.durable.replay_log import ReplayLog
    from aeon.adapters.durable.steps import Recorder, Supplier

RUN_WORKFLOW = "aeon.run"
# A fork made by `aeon resume --rerun-unsafe` carries this suffix: it may run again the tool a crash cut off.
RERUN_SUFFIX = ".rerun-unsafe"
# A fork made by `aeon resume --mark-done`: the cut-off call's output is the one the operator gave, sent to the fork
# as a DBOS message on this topic (a workflow's input cannot change; its messages are recorded like steps).
MARK_DONE_SUFFIX = ".mark-done"
MARK_DONE_TOPIC = "aeon.mark-done"


class RunSpec(msgspec.Struct, kw_only=True):
    """A durable run's input, recorded by DBOS: what to run and how to rebuild its services in any process.

    `config` and `overrides` (never the settings themselves: keys stay in the environment) are loaded again by the
    process that executes the run. `source` and `from_pass` make a replay: a fork of run `source` at that pass.
    `direct`: started at once by the process that made it (aeon run, the Python API, aeon mcp), not from a queue —
    that first execution knows it is one, defers what it may from its first call and writes its log as it goes, so
    any later execution of it reads the log for what it holds. `thread`: the thread the run belongs to, as it stood
    when the run started (what its prompts show), where the run leaves its turn when it ends."""

    run_id: str
    request: str
    started_at: str
    config: str | None = None
    overrides: dict[str, Any] = msgspec.field(default_factory=dict)
    plan: str | None = None
    source: str | None = None
    from_pass: int | None = None
    direct: bool = False
    thread: ThreadContext | None = None


class Stopped(msgspec.Struct, kw_only=True):
    code: str
    message: str
    tool: str
    key: str


class Outcome(msgspec.Struct, kw_only=True):
    """What the workflow returns: the run's result, or why it stopped before finishing; or, in the process that
    started it, that it waits for a person's decision (`awaiting`: the run goes on waiting on the record)."""

    result: RunResult | None = None
    stopped: Stopped | None = None
    awaiting: Pending | None = None
    state: RunState | None = None  # with `awaiting`: the run's state as it waits (what its history holds so far)
    # why the run's first execution could not write its first log record: it never started (nothing was spent)
    unlogged: str | None = None
    # the checkpoints deferred until the run's end, (step name, run state): what a replay of a finished run forks from
    carried: list[tuple[str, str]] = msgspec.field(default_factory=list)


def decode_outcome(text: Any) -> Outcome:
    return msgspec.json.decode(str(text), type=Outcome)


class Orchestrating(Protocol):
    """What the workflow asks of the run's orchestrator (the kernel's, built by the Composer)."""

    redactor: Redactor

    async def run(
        self,
        request: str,
        *,
        plan: Plan | None = None,
        correlation_id: str | None = None,
        started_at: str | None = None,
        thread: ThreadContext | None = None,
    ) -> RunResult: ...

    async def resume(self, state: RunState) -> RunResult: ...


@dataclass
class Built:
    orchestrator: Orchestrating
    log: ReplayLog
    recorder: Recorder


class Composer(Protocol):
    """How the process builds a run from its recorded input: Aeon's container, in the composition root."""

    def build(
        self, spec: RunSpec, runtime: DurableRuntime, *, rerun_unsafe: bool, supplied: Supplier | None
    ) -> AbstractAsyncContextManager[Built]:
        """The run's orchestrator, its LLM, tools and checkpoints made steps, its log replay-aware; open meanwhile."""
        ...

    def recorded_input(self, spec: RunSpec) -> str:
        """The workflow input DBOS records: the spec with its request, plan and overrides redacted."""
        ...

    def tools(self, spec: RunSpec) -> ToolPort:
        """The tools of the run's recorded config and overrides."""
        ...


class DurableRuntime:
    """The process's durable state beyond the record: its engine, and per run it started or executes here the live
    objects the record cannot hold."""

    def __init__(self, compose: Composer) -> None:
        self.compose = compose
        self.engine: DurableEngine | None = None
        self.progress: dict[str, ProgressPort] = {}
        # the input as given, for the execution in this process; DBOS records it redacted (Composer.recorded_input)
        self.inputs: dict[str, RunSpec] = {}
        # who asks on this process's terminal about a run's tool calls (a run started here with a person at it)
        self.inline: dict[str, ApproverPort] = {}
        # told when a run executing here waits for a decision that nobody here can give (the caller may leave)
        self.waiting: dict[str, Callable[[Pending, RunState], None]] = {}
        # the direct runs this process has started and not yet begun executing: their first execution
        self.fresh: set[str] = set()
        # the runs executing here that asked for a decision nobody here could give (a batch reads it instead of
        # asking the system database whether each of its runs executing here waits)
        self.asked: set[str] = set()
        # the runs started here whose caller waits here: the result as the caller gets it (redacted of the
        # configured secrets only, Redactor.for_caller); the record holds it fully redacted
        self.results: dict[str, RunResult | None] = {}

    def opened(self) -> DurableEngine:
        assert self.engine is not None, "a durable run executes only in a process with a DurableEngine"
        return self.engine

    def recorded_input(self, spec: RunSpec) -> str:
        """What DBOS records of `spec` (redacted); the spec as given stays here for its execution in this process:
        a tool that needs a key in its plan arguments gets it; a run re-executed from the record gets the redacted
        form."""
        self.inputs[spec.run_id] = spec
        return self.compose.recorded_input(spec)

    async def claimed(self, run_id: str, key: str, decision: ApprovalDecision) -> None:
        """A decision made on this terminal, recorded and sent unless another process decided first (its decision
        stands, and reaches the run)."""
        await asyncio.to_thread(self.opened().decisions.claim, run_id, key, decision)

    def waits(self, run_id: str, pending: Pending, state: RunState) -> None:
        """Run `run_id`, executing here, waits for a decision nobody here can give (its state: the history so far)."""
        self.asked.add(run_id)
        if (told := self.waiting.get(run_id)) is not None:
            told(pending, RunState.decode(state.encode()))  # a copy: the run's own goes on changing once decided

    async def recorded(self, run_id: str) -> set[str]:
        return set(self.opened().step_names(run_id))


# The one runtime of this process. DBOS calls the workflow as a plain function registered by name ("aeon.run", which
# the runs on every record are named by), with nothing but its recorded input: the live objects of the process that
# executes it are reached here. A DBOS configured instance would name each run by its class and instance too, and runs
# recorded before could no longer be recovered: so one process-level slot, filled once by the first DbosProcess.
_HELD: list[DurableRuntime] = []


def register(runtime: DurableRuntime) -> DurableRuntime:
    """Make `runtime` the process's, unless one is already (then that one): the one the workflow reaches."""
    if not _HELD:
        _HELD.append(runtime)
    return _HELD[0]


def held() -> DurableRuntime:
    assert _HELD, "a durable run executes only in a process that made a DbosProcess (adapters/durable/process.py)"
    return _HELD[0]
