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
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, TypedDict, Unpack

from aeon.adapters.approval import Callback, CallbackApprover
from aeon.adapters.tools.loader import register_tools
from aeon.adapters.tools.toolset import Toolset
from aeon.application.errors import InputError, UsageError
from aeon.application.ports import LLMPort, ProgressPort
from aeon.application.results import RunEnded, RunResult
from aeon.application.runs import RunCommand, Runs, Starts, module_names, rebuildable
from aeon.application.runs.answers import Answers, Feed
from aeon.application.runs.answers import answer as answer  # aeon.answer
from aeon.domain.errors import AeonError
from aeon.domain.plan import Plan
from aeon.domain.progress import ProgressEvent
from aeon.domain.text import request_problem
from aeon.entrypoints.api_options import PathLike, config_of, overrides_of, plan_of
from aeon.entrypoints.config.layers import layered, load_settings
from aeon.entrypoints.config.schema import Settings, tool_folders
from aeon.entrypoints.container import Container, build_container
from aeon.entrypoints.secrets import redactor_for
from aeon.entrypoints.session import runs_for


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
    thread: str
    """Run in this thread (its name): the run sees the thread's earlier requests, answers and memory, and leaves its
    own turn there (`aeon threads show NAME`); kept in the system database (durable.database_url)."""
    approve: Callback
    """Decides on each tool call that needs approval (`@tool(requires_approval=True)`, config tools.approval, a plan
    step's requires_approval): called with the ApprovalRequest (step, tool, exact arguments), it returns True
    (approve), False (deny) or an ApprovalDecision (edited arguments, a reason); it may be async. Without it, answer
    aeon.stream's ApprovalRequested event with `aeon.answer(event.request, ...)`; aeon.run and aeon.arun deny such
    calls (nobody to ask), and a durable run waits on the record for `aeon approve` / `aeon deny`."""


@dataclass(frozen=True)
class _Prepared:
    container: Container
    runs: Runs
    command: RunCommand
    durable: bool


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
        prepared = _prepare("aeon.stream", request, options, progress=Feed(queue))
    task = asyncio.create_task(_execute(prepared), name="aeon.stream run")
    task.add_done_callback(lambda _: queue.put_nowait(None))  # after every event the run put on the queue
    try:
        while (event := await queue.get()) is not None:
            yield event
        with _typed_errors():
            result = task.result()
        yield RunEnded(result=result)
    finally:
        await _stopped(task)


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
        return await _execute(prepared)


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
    request, the settings, the model, the tools and the plan; then the run use case decides durable-or-not."""
    if unknown := sorted(set(options) - RunOptions.__optional_keys__):
        takes = ", ".join(sorted(RunOptions.__optional_keys__))
        raise UsageError(f"{entry}() got an unexpected keyword argument {unknown[0]!r} (it takes: {takes})")
    if not isinstance(request, str):
        raise UsageError(f"{entry}() takes the request as text, not {type(request).__name__}")
    if (problem := request_problem(request)) is not None:
        raise InputError(problem)
    config_file, mapping = config_of(options.get("config"))
    overrides = overrides_of(options)
    settings = load_settings(config_file, overrides, mapping=mapping)
    model, said = options.get("model"), options.get("durable")
    if model is not None and not isinstance(model, str | LLMPort):
        raise UsageError(f'model must be a name such as "openai:gpt-4o-mini" or a model object, not {model!r:.80}')
    given = model if isinstance(model, LLMPort) else None  # not a resource: the caller's to close
    container = build_container(settings, progress=progress, llm=given)
    tools = _listed(options.get("tools", ()))
    bound, search = settings.tools.import_timeout, tool_folders(settings)
    register_tools(container.registry(), tools, search=search, import_timeout=bound)  # a broken module fails here
    tool_port = container.tools()  # the registry's tools and the MCP servers' (which start now)
    approve = options.get("approve")
    # a stream's consumer answers the ApprovalRequested event (aeon.answer); without either, such a call is denied
    asker = CallbackApprover(approve) if approve is not None else Answers() if progress is not None else None
    given_plan = plan_of(options.get("plan"), tool_port)
    command = RunCommand(request, given_plan, said, asker, on_record=False, thread=options.get("thread"))
    configured = rebuildable(tools, model, said=said, streamed=progress is not None, entry=entry)
    configured = configured and settings.durable.enabled
    recorded: list[Starts] = []
    runs = runs_for(container, request, durable=lambda: recorded[0], configured=configured)
    if durable := runs.durable_for(command):
        recorded.append(_recorded(settings, config_file, mapping, overrides, tools, container))
    return _Prepared(container, runs, command, durable)


def _recorded(
    settings: Settings, config_file: Path | None, mapping: Mapping[str, Any] | None, overrides: dict[str, Any],
    tools: list[object], container: Container,
) -> Starts:  # fmt: skip
    """The Python API's durable port: the run in a worker thread (DBOS blocks), recording its tools as modules to be
    rebuilt in any process (UsageError for tools that are not modules); once started it goes on to its end."""
    from aeon.adapters.durable.starts import DurableStart, Recorded  # DBOS is imported only for a durable run
    from aeon.entrypoints.durable.factory import process

    modules = [*settings.tools.modules, *module_names(tools)]
    recorded = layered(mapping or {}, overrides, {"tools.modules": modules})
    lent = Recorded(settings, config_file, recorded, container, container.tools())
    return DurableStart(process(), lent, threaded=True)


def _listed(tools: Iterable[object]) -> list[object]:
    if isinstance(tools, str | ModuleType | Toolset) or callable(tools) or not isinstance(tools, Iterable):
        raise UsageError(f"tools takes a list (tools=[{getattr(tools, '__name__', 'weather')}]), not one tool")
    return list(tools)


async def _execute(prepared: _Prepared) -> RunResult:
    """The run use case: the checks every front door makes before a run spends anything (the model can run, the log
    can be written), the run, each resource closed once on the way out, as `aeon run` does — durable or not."""
    result = await prepared.runs.started(prepared.command, durable=prepared.durable)
    return prepared.container.redactor().for_caller().struct(result, RunResult)  # as `aeon run` shows it
