"""The one-call Python API — aeon.run, aeon.arun, aeon.stream — on the settings, container and resources `aeon run`
uses, so that config validation, redaction, the log and the closing of every resource are the same.

What a call raises is a typed AeonError with a one-line message (secrets redacted), before the run starts: bad
config, input or usage, a tools module that does not load, a log that cannot be written. Once started, a run ends
in a RunResult, however it ends (completed, expired, failed, interrupted); only a bug in Aeon propagates, after the
run is ended on the record.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, TypedDict, Unpack

import msgspec
from dependency_injector import providers

from aeon.adapters.approval import Callback, CallbackApprover
from aeon.adapters.documents import read_document
from aeon.adapters.tools.loader import register_tools
from aeon.adapters.tools.toolset import Toolset
from aeon.application.errors import ConfigurationError, InputError, UsageError
from aeon.application.kernel.orchestrator import Orchestrator
from aeon.application.plans.plan_documents import plan_from_document
from aeon.application.ports import ApproverPort, LLMPort, ProgressPort, ToolPort
from aeon.application.results import RunEnded, RunResult
from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Verdict
from aeon.domain.errors import AeonError
from aeon.domain.plan import Plan
from aeon.domain.progress import ProgressEvent
from aeon.domain.run_state import RunState
from aeon.entrypoints.container import (
    Container,
    build_container,
    layered,
    load_settings,
    tool_folders,
)
from aeon.entrypoints.secrets import redactor_for
from aeon.entrypoints.session import session
from aeon.entrypoints.settings import Settings, model_overrides
from aeon.entrypoints.terminal import request_problem

PathLike = str | os.PathLike[str]


class RunOptions(TypedDict, total=False):
    """The keyword arguments of aeon.run, aeon.arun and aeon.stream after the request; every one is optional."""

    tools: Iterable[object]
    """Functions (typed, with a docstring: each is a tool as `@aeon.tool` would make it, which adds options),
    `aeon.Toolset` instances and modules (their `@aeon.tool` tools), added to the config's tools (the built-in
    calculator and echo unless `tools.builtins: false`, and `tools.modules`)."""
    model: str | LLMPort
    """"openai:gpt-4o-mini", "anthropic:claude-haiku-5-5", "local" (the offline default), "scripted:FILE.yaml", or a
    ready model object (an LLMPort, e.g. `aeon.testing.answers(...)`; yours to close). A name sets `llm.adapter` and
    the model; endpoint, key and dialect come from the config and the environment (OPENAI_API_KEY …)."""
    plan: Plan | Mapping[str, Any] | PathLike
    """Run this plan (a Plan, its JSON as a mapping, or a JSON/YAML file) instead of planning one."""
    config: PathLike | Mapping[str, Any]
    """A YAML config file layered over the built-in base config, or the same sections as a mapping."""
    ttl: int
    """The most passes of the loop (as `--ttl`: with a `plan`, no profiling call)."""
    max_llm_calls: int
    max_tokens: int
    max_cost: float
    """USD for the whole run, priced from the config's `prices`; a call that could cross it is not sent."""
    max_seconds: float
    log_file: PathLike | Literal[False]
    """Append the JSONL event log here (default: the config's `log.path`, .aeon/runs.jsonl); False: no log."""
    durable: bool
    """Record the run on DBOS, so that `aeon resume RUN_ID` (the result's correlation_id) finishes it after a crash,
    in any process: its tools are then given as modules (or tools.modules names) and its model by name, which that
    process can load again. aeon.run and aeon.arun only; the durable runs of one process take turns (DBOS is one per
    process). Default: the config's `durable.enabled` (true) for a run that can be rebuilt so — tools as modules,
    the model by name, not streamed; a run given tool functions or a model object runs in this process only."""
    approve: Callback
    """Decides on each tool call that needs approval (`@tool(requires_approval=True)`, config tools.approval, a plan
    step's requires_approval): called with the ApprovalRequest (step, tool, exact arguments), it returns True
    (approve), False (deny) or an ApprovalDecision (edited arguments, a reason); it may be async. Without it, answer
    aeon.stream's ApprovalRequested event with `aeon.answer(event.request, ...)`; aeon.run and aeon.arun deny such
    calls (nobody to ask), and a durable run waits on the record for `aeon approve` / `aeon deny`."""


_RUN_LIMITS = ("ttl", "max_llm_calls", "max_tokens", "max_cost", "max_seconds")
# DBOS is one per process, launched and destroyed around each durable run: such runs take turns
_ONE_ENGINE = threading.Lock()


@dataclass(frozen=True)
class _Durable:
    """What a durable run records to be rebuilt in any process: the config file and every other layer over it."""

    settings: Settings
    config_file: Path | None
    overrides: dict[str, Any]
    approver: ApproverPort | None = None  # asks in this process; the decision is sent as the run's DBOS message


@dataclass(frozen=True)
class _Prepared:
    container: Container
    plan: Plan | None
    durable: _Durable | None = None


def run(request: str, /, **options: Unpack[RunOptions]) -> RunResult:
    """Run `request` to its RunResult — the fields of `aeon run --json` — and return it:

        result = aeon.run("what is the weather in Paris?", tools=[weather], model="openai:gpt-4o-mini")

    The keyword arguments are RunOptions'. Inside a running event loop (an async function, Jupyter) use
    `await aeon.arun(...)`: this raises UsageError there. Ctrl-C ends the run as interrupted and returns its result.
    Raises ConfigurationError, InputError, ToolRegistrationError, UsageError or EventLogUnavailable (all AeonError)
    before the run starts."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # none: the one way to learn it without starting one
        return asyncio.run(_arun("aeon.run", request, options))
    raise UsageError(
        "aeon.run() cannot run inside a running event loop (an async function, Jupyter): use await aeon.arun(...)"
    )


async def arun(request: str, /, **options: Unpack[RunOptions]) -> RunResult:
    """aeon.run for async code (and Jupyter): `result = await aeon.arun("…", tools=[weather])`. Cancelling it ends
    the run as interrupted, on the record, and returns its result."""
    return await _arun("aeon.arun", request, options)


async def stream(request: str, /, **options: Unpack[RunOptions]) -> AsyncIterator[ProgressEvent | RunEnded]:
    """The run's events as they happen (aeon.events), redacted as the log is, ending with RunEnded and its result:

        async for event in aeon.stream("…", tools=[weather]):
            match event:
                case aeon.events.StepEnded(step_id=step, output=output):
                    print(step, output)
                case aeon.events.RunEnded(result=result):
                    print(result.status)

    The run executes in a task of its own; leaving the loop early (`break`, an exception), or closing the stream,
    cancels it, and it ends as interrupted on the record with its resources closed. `contextlib.aclosing(...)`
    makes that happen before the `async with` ends rather than when the stream is collected. Events wait in an
    unbounded queue while the consumer is busy: a run's caps bound how many it makes, so a slow reader holds at most
    one run's events (as many as its log has records), and the run never waits for the reader.
    The keyword arguments are RunOptions'; the errors aeon.run raises come out of the first iteration."""
    queue: asyncio.Queue[ProgressEvent | None] = asyncio.Queue()
    with _typed_errors():
        prepared = _prepare("aeon.stream", request, options, progress=_Feed(queue))
    task = asyncio.create_task(_execute(prepared, request), name="aeon.stream run")
    task.add_done_callback(lambda _: queue.put_nowait(None))  # after every event the run put on the queue
    try:
        while (event := await queue.get()) is not None:
            yield event
        with _typed_errors():
            result = task.result()
        yield RunEnded(result=result)
    finally:
        await _stopped(task)


class _Feed:
    """The stream's ProgressPort: each event onto the stream's queue, never waiting (update is called in the run)."""

    def __init__(self, queue: asyncio.Queue[ProgressEvent | None]) -> None:
        self._queue = queue

    def update(self, event: ProgressEvent) -> None:
        self._queue.put_nowait(event)


async def _stopped(task: asyncio.Task[RunResult]) -> None:
    """The run's task finished: cancelled first when the consumer left before its end (the orchestrator then ends
    the run as interrupted, and its resources are closed on the way out)."""
    if not task.done():
        task.cancel()
    await asyncio.wait([task])
    if not task.cancelled():
        task.exception()  # seen: a failure nobody waits for any more is not reported as never retrieved


async def _arun(entry: str, request: str, options: RunOptions) -> RunResult:
    with _typed_errors():
        prepared = _prepare(entry, request, options, progress=None)
        return await _execute(prepared, request)


@contextlib.contextmanager
def _typed_errors() -> Iterator[None]:
    """An AeonError leaves as itself, its one-line message redacted (it may quote a config value or a plan
    argument) and without the frames of Aeon's internals."""
    try:
        yield
    except AeonError as exc:
        exc.args = (redactor_for(None).text(str(exc)),)
        exc.__traceback__ = None
        raise


def _prepare(entry: str, request: str, options: RunOptions, *, progress: ProgressPort | None) -> _Prepared:
    """Everything that can be wrong before the run starts, checked in the order `aeon run` checks it: the call, the
    request, the settings, the tools, the model and the plan."""
    if unknown := sorted(set(options) - RunOptions.__optional_keys__):
        takes = ", ".join(sorted(RunOptions.__optional_keys__))
        raise UsageError(f"{entry}() got an unexpected keyword argument {unknown[0]!r} (it takes: {takes})")
    if not isinstance(request, str):
        raise UsageError(f"{entry}() takes the request as text, not {type(request).__name__}")
    if (problem := request_problem(request)) is not None:
        raise InputError(problem)
    config_file, mapping = _config(options.get("config"))
    overrides = _overrides(options)
    settings = load_settings(config_file, overrides, mapping=mapping)
    container = build_container(settings, progress=progress)
    registry = container.registry()  # the config's tools modules are imported now: a broken one fails here
    bound = settings.tools.import_timeout
    tools = _listed(options.get("tools", ()))
    register_tools(registry, tools, search=tool_folders(settings), import_timeout=bound)
    tool_port = container.tools()  # the registry's tools and the MCP servers' (which start now)
    if (approve := options.get("approve")) is not None:
        container.approver.override(providers.Object(CallbackApprover(approve)))
    elif progress is not None:  # a stream's consumer answers the ApprovalRequested event (aeon.answer)
        container.approver.override(providers.Object(_Answers()))
    model = options.get("model")
    if model is not None and not isinstance(model, str):
        if not isinstance(model, LLMPort):
            raise UsageError(f'model must be a name such as "openai:gpt-4o-mini" or a model object, not {model!r:.80}')
        container.llm.override(providers.Object(model))  # not a resource: the caller's to close
    plan = _plan(options.get("plan"), tool_port)
    wanted = options.get("durable")
    if wanted is None:  # the config's default, for a run that another process can rebuild
        wanted = settings.durable.enabled and progress is None and _rebuildable(tools, model)
    if not wanted:
        return _Prepared(container=container, plan=plan)
    if progress is not None:
        raise UsageError(f"{entry}() does not stream a durable run yet: use aeon.run or aeon.arun with durable=True")
    modules = [*settings.tools.modules, *_module_names(tools)]
    if model is not None and not isinstance(model, str):
        raise UsageError("a durable run names its model (model='openai:…' or the config's llm section), not an object")
    recorded = layered(mapping or {}, overrides, {"tools.modules": modules})
    durable = _Durable(settings, config_file, recorded, CallbackApprover(approve) if approve is not None else None)
    return _Prepared(container=container, plan=plan, durable=durable)


def _listed(tools: Iterable[object]) -> list[object]:
    if isinstance(tools, str | ModuleType | Toolset) or callable(tools) or not isinstance(tools, Iterable):
        raise UsageError(f"tools takes a list (tools=[{getattr(tools, '__name__', 'weather')}]), not one tool")
    return list(tools)


def _rebuildable(tools: Iterable[object], model: object) -> bool:
    """Whether another process can load the run's tools (modules, or their names) and its model (named) again."""
    named = (t.__name__ if isinstance(t, ModuleType) else t for t in tools)
    return (model is None or isinstance(model, str)) and all(isinstance(n, str) and n != "__main__" for n in named)


def _module_names(tools: Iterable[object]) -> list[str]:
    """The tools of a durable run as tools.modules entries, which any process that finishes the run imports."""
    names = []
    for item in tools:
        name = item.__name__ if isinstance(item, ModuleType) else item
        if not isinstance(name, str) or name == "__main__":
            raise UsageError(
                f"a durable run is finished by whatever process resumes it, which imports its tools again: give them "
                f"as modules it can import by name (or tools.modules entries), not {item!r:.60}"
            )
        names.append(name)
    return names


def _config(config: PathLike | Mapping[str, Any] | None) -> tuple[Path | None, Mapping[str, Any] | None]:
    if config is None:
        return None, None
    if isinstance(config, Mapping):
        if not all(isinstance(key, str) for key in config):
            raise ConfigurationError("the config mapping's keys must be section names (llm, run, tools …)")
        return None, config
    if isinstance(config, str | os.PathLike):
        return Path(config), None
    raise UsageError(f"config must be a path to a YAML file or a mapping, not {type(config).__name__}")


def _overrides(options: RunOptions) -> dict[str, Any]:
    """The keyword arguments as dotted settings, applied over the config as `aeon run`'s flags are."""
    given: Mapping[str, Any] = options
    out: dict[str, Any] = {f"run.{name}": given[name] for name in _RUN_LIMITS if given.get(name) is not None}
    if "run.ttl" in out:
        out["run.ttl_given"] = True
    if isinstance(model := options.get("model"), str):
        out |= model_overrides(model)
    if (log_file := options.get("log_file")) is not None:
        out["log.path"] = "" if log_file is False else os.fspath(log_file)
    return out


def _plan(plan: Plan | Mapping[str, Any] | PathLike | None, tools: ToolPort) -> Plan | None:
    """The given plan, checked as `aeon run --plan` checks a file; a Plan is copied (the run changes its own)."""
    if plan is None:
        return None
    known = {spec.name: spec for spec in tools.list()}
    if isinstance(plan, Plan):
        return plan_from_document(msgspec.to_builtins(plan), source="(a Plan)", tools=known)
    if isinstance(plan, Mapping):
        return plan_from_document(dict(plan), source="(a mapping)", tools=known)
    if isinstance(plan, str | os.PathLike):
        return plan_from_document(read_document(Path(plan), what="plan"), source=os.fspath(plan), tools=known)
    raise UsageError(f"plan must be a Plan, a mapping or a path to a plan file, not {type(plan).__name__}")


async def _execute(prepared: _Prepared, request: str) -> RunResult:
    """Make the checks every front door makes before a run spends anything (session.ready: the model can run, the
    log can be written), run, and close each resource once on the way out, as `aeon run` does — durable or not."""
    container = prepared.container
    execute = None if prepared.durable is not None else partial(_orchestrated, request=request, plan=prepared.plan)
    result, _ = await session(container, request, execute=execute, status=None, plan=prepared.plan)
    if prepared.durable is not None:
        result = await asyncio.to_thread(_durably, prepared.durable, request, prepared.plan)
    assert result is not None
    return container.redactor().for_caller().struct(result, RunResult)  # as `aeon run` shows it (Redactor.for_caller)


async def _orchestrated(orchestrator: Orchestrator, *, request: str, plan: Plan | None) -> RunResult:
    return await orchestrator.run(request, plan=plan)


def _durably(durable: _Durable, request: str, plan: Plan | None) -> RunResult:
    """The run as a DBOS workflow in this process, as `aeon run --durable` starts it (DBOS blocks: a worker thread
    waits for it). It goes on to its end once started: cancelling the call leaves it running, then on the record."""
    from aeon.adapters.durable import ops  # DBOS is imported only for a durable run
    from aeon.entrypoints.durable import compose

    encoded = msgspec.json.encode(plan).decode() if plan is not None else None
    settings = durable.settings
    spec = compose.spec_for(request, durable.config_file, durable.overrides, log_path=settings.log.path, plan=encoded)
    with _ONE_ENGINE, compose.engine_for(settings, "run"):
        outcome = ops.start(spec, inline=durable.approver)
    assert outcome.result is not None, "only a resumed run stops at a tool call cut off in flight"
    return outcome.result


# The stream's open approval requests, by run and request key: aeon.answer resolves them.
_WAITING: dict[tuple[str, str], asyncio.Future[ApprovalDecision]] = {}


class _Answers:
    """The ApproverPort of a stream without `approve=`: each request waits for `aeon.answer` on its event."""

    async def decide(
        self, request: ApprovalRequest, snapshot: RunState, *, wait_seconds: float
    ) -> ApprovalDecision | None:
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        _WAITING[request.run_id, request.key] = future
        try:
            return await asyncio.wait_for(future, wait_seconds)
        except TimeoutError:
            return None
        finally:
            _WAITING.pop((request.run_id, request.key), None)


def answer(request: ApprovalRequest, decision: bool | ApprovalDecision, /) -> None:
    """Answer a stream's ApprovalRequested event: `aeon.answer(event.request, True)` approves the call as asked,
    False denies it, an ApprovalDecision edits its arguments or gives a reason. UsageError when the request is not
    waiting (answered already, or from a run with an `approve=` callback)."""
    future = _WAITING.get((request.run_id, request.key))
    if future is None or future.done():
        raise UsageError(f"tool call {request.key} of run {request.run_id} is not waiting for an answer")
    if not isinstance(decision, ApprovalDecision):
        verdict = Verdict.APPROVE if decision is True else Verdict.DENY
        decision = ApprovalDecision(verdict=verdict, by="aeon.answer", reason=None if decision else "denied")
    future.set_result(decision)
