"""Durable runs: an `aeon run` as a DBOS workflow built by Aeon's container, with its LLM calls, tool calls and
phase checkpoints as recorded steps (adapters/durable) and a log a re-execution does not write twice."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
from dbos import DBOS
from dependency_injector import providers

from aeon.adapters.durable.approval import DurableApprover
from aeon.adapters.durable.engine import DurableEngine
from aeon.adapters.durable.replay_log import ReplayLog, mend_tail, records_written
from aeon.adapters.durable.steps import (
    UNSAFE_CODE,
    DurableCheckpoint,
    DurableLLM,
    DurableTools,
    Recorder,
    Supplier,
    UnsafeToolInFlight,
    checkpoint_passes,
    recorded_outputs,
)
from aeon.adapters.llm.providers import PROVIDERS
from aeon.adapters.tools.composite import CompositeTools
from aeon.application.errors import EventLogUnavailable, InputError
from aeon.application.kernel.orchestrator import Orchestrator
from aeon.application.ports import ApproverPort, LLMPort, ProgressPort
from aeon.application.results import RunResult
from aeon.domain.approval import ApprovalDecision, Pending
from aeon.domain.log_run import RunForkedRecord
from aeon.domain.plan import Plan
from aeon.domain.run_state import RunState
from aeon.entrypoints.container import Container, build_container, load_settings, opened, provided
from aeon.entrypoints.secrets import redactor_for
from aeon.entrypoints.settings import Settings

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
    any later execution of it reads the log for what it holds."""

    run_id: str
    request: str
    started_at: str
    config: str | None = None
    overrides: dict[str, Any] = msgspec.field(default_factory=dict)
    plan: str | None = None
    source: str | None = None
    from_pass: int | None = None
    direct: bool = False


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


class Live:
    """What this process knows beyond the record: its engine, and a live progress display per run it started."""

    engine: DurableEngine | None = None
    progress: dict[str, ProgressPort] = {}  # noqa: RUF012 — process-wide on purpose
    # the input as given, for the execution in this process; DBOS records it redacted (recorded_input)
    inputs: dict[str, RunSpec] = {}  # noqa: RUF012 — process-wide on purpose
    # who asks on this process's terminal about a run's tool calls (a run started here with a person at it)
    inline: dict[str, ApproverPort] = {}  # noqa: RUF012 — process-wide on purpose
    # told when a run executing here waits for a decision that nobody here can give (the caller may leave)
    waiting: dict[str, Callable[[Pending, RunState], None]] = {}  # noqa: RUF012 — process-wide on purpose
    # the direct runs this process has started and not yet begun executing: their first execution, nothing recorded
    fresh: set[str] = set()  # noqa: RUF012 — process-wide on purpose
    # the runs executing here that asked for a decision nobody here could give (a batch reads it instead of asking
    # the system database whether each of its runs executing here waits)
    asked: set[str] = set()  # noqa: RUF012 — process-wide on purpose
    # the runs started here whose caller waits here: the result as the caller gets it (redacted of the configured
    # secrets only, Redactor.for_caller); the record holds it fully redacted, which any other process gets
    results: dict[str, RunResult | None] = {}  # noqa: RUF012 — process-wide on purpose


@dataclass
class Built:
    orchestrator: Orchestrator
    log: ReplayLog
    recorder: Recorder


@contextlib.asynccontextmanager
async def build(spec: RunSpec, *, rerun_unsafe: bool, supplied: Supplier | None = None) -> AsyncIterator[Built]:
    """The run's orchestrator from Aeon's container, its LLM, tools and checkpoints made steps, its log replay-aware;
    the container's resources open for the run and each closed once after it, however it ends.

    The log is read for what it already holds of the run only when the run turns out to execute again (its first
    recorded step comes from the record). Settings and the tool registry are built once per process and config (a
    batch builds thousands of runs from one)."""
    settings, registry = configured(spec.config, spec.overrides)
    container = build_container(settings, progress=Live.progress.get(spec.run_id))
    container.tools.override(providers.Object(registry))
    path = settings.log.path
    count = None
    if path is not None:
        mend_tail(path)
        count = partial(records_written, path, spec.run_id, keep=settings.log.keep)
    if (shared := shared_model(settings, container)) is not None:
        container.llm.override(providers.Object(shared))  # the process's: not opened, nor closed, with this run
    async with opened(container):
        log = ReplayLog(container.event_log(), count=count)
        container.event_log.override(providers.Object(log))  # adapters that log (retries, downgrades) go through it
        recorder = Recorder(log)
        redactor = container.redactor()
        model = await provided(container.llm)
        defer = settings.durable.defer_answers_under
        container.llm.override(providers.Object(DurableLLM(model, recorder, redactor=redactor, defer=defer)))
        tools = DurableTools(
            registry,
            recorder,
            idempotent=registry.is_idempotent,
            pure=registry.is_pure,
            recorded=lambda: _recorded(spec.run_id),
            rerun_unsafe=rerun_unsafe,
            supplied=supplied,
            redactor=redactor,
        )
        container.tools.override(providers.Object(tools))
        container.checkpoint.override(providers.Object(DurableCheckpoint(recorder, redactor=redactor)))
        approver = DurableApprover(
            inline=Live.inline.get(spec.run_id),
            waiting=partial(_waits, spec.run_id),
            redactor=redactor,
            before_wait=recorder.flush,
            send=_claimed,
        )
        container.approver.override(providers.Object(approver))
        orchestrator = await provided(container.orchestrator)
        ids = itertools.count(1)
        orchestrator.new_id = lambda: f"{spec.run_id}.{next(ids)}"  # the same ids when the run is re-executed
        yield Built(orchestrator=orchestrator, log=log, recorder=recorder)


async def _claimed(run_id: str, key: str, decision: ApprovalDecision) -> None:
    """A decision made on this terminal, recorded and sent unless another process decided first (its decision
    stands, and reaches the run)."""
    engine = Live.engine
    assert engine is not None, "a durable run executes only in a process with a DurableEngine"
    await asyncio.to_thread(engine.decisions.claim, run_id, key, decision)


def _waits(run_id: str, pending: Pending, state: RunState) -> None:
    """Run `run_id`, executing here, waits for a decision nobody here can give (its state: the history so far)."""
    Live.asked.add(run_id)
    if (told := Live.waiting.get(run_id)) is not None:
        told(pending, RunState.decode(state.encode()))  # a copy: the run's own goes on changing once decided


_MODELS: dict[str, LLMPort] = {}


def shared_model(settings: Settings, container: Container) -> LLMPort | None:
    """The model client shared by every run the process executes (a batch, a worker), one per model
    configuration, so the local llama-server starts once and stays warm — its KV cache keeps the prompt prefixes
    all runs share; None for the scripted model, which answers each run from the start of its script, so each run
    gets its own (a container resource, closed after the run). A shared client lives as long as the process (the
    local server is stopped by its atexit hook)."""
    if PROVIDERS[settings.llm.adapter].per_run:
        return None
    key = settings.llm.model_dump_json()
    if key not in _MODELS:
        _MODELS[key] = container.llm_adapter()
    return _MODELS[key]


_CONFIGURED: dict[str, Settings] = {}
_TOOLS: dict[str, CompositeTools] = {}


def configured(config: str | None, overrides: dict[str, Any]) -> tuple[Settings, CompositeTools]:
    """The settings of a run's recorded config and overrides (loaded once per process), and its tools."""
    key = msgspec.json.encode([config, overrides]).decode()
    if key not in _CONFIGURED:
        _CONFIGURED[key] = load_settings(Path(config) if config else None, overrides)
    settings = _CONFIGURED[key]
    return settings, shared_tools(settings)


def shared_tools(settings: Settings) -> CompositeTools:
    """The tools of every run the process executes with the same tools config: its tools modules are imported
    once and its MCP servers start once per process — a batch, a worker — and stop when it exits (or, lent by
    `aeon run --durable`, when that command ends)."""
    key = _tools_key(settings)
    if key not in _TOOLS:
        _TOOLS[key] = build_container(settings).tools()
    return _TOOLS[key]


@contextlib.contextmanager
def lent_tools(settings: Settings, tools: CompositeTools) -> Iterator[None]:
    """Meanwhile the runs of `settings` this process executes use `tools`: `aeon run --durable` lends those it
    checked the plan against, so their MCP servers start once, and stop with the command."""
    key = _tools_key(settings)
    before = _TOOLS.get(key)
    _TOOLS[key] = tools
    try:
        yield
    finally:
        if before is None:
            del _TOOLS[key]
        else:
            _TOOLS[key] = before


def _tools_key(settings: Settings) -> str:
    dump = [settings.tools.model_dump(mode="json"), str(settings.config_dir), _opened(settings)]
    return hashlib.sha256(msgspec.json.encode(dump)).hexdigest()


def _opened(settings: Settings) -> list[Any]:
    """What the tools config's dump hides and still tells two configs apart: the MCP servers' env and headers."""

    def opened(values: dict[str, Any]) -> dict[str, str | None]:
        return {k: v.get_secret_value() if v is not None else None for k, v in values.items()}

    return [[opened(s.env), opened(s.headers)] for s in settings.tools.mcp]


def recorded_input(spec: RunSpec) -> str:
    """The workflow input DBOS records: the request, plan and overrides redacted. The spec as given stays in this
    process (Live.inputs) for the run's execution here: a tool that needs a key in its plan arguments gets it; a
    run re-executed from the record (after a crash, in another process, a replay) gets the redacted form."""
    settings, _ = configured(spec.config, spec.overrides)
    redactor = redactor_for(settings)
    Live.inputs[spec.run_id] = spec
    plan = redactor.json(spec.plan.encode()).decode() if spec.plan else None
    shown = msgspec.structs.replace(
        spec, request=redactor.text(spec.request), plan=plan, overrides=redactor.data(spec.overrides)
    )
    return msgspec.json.encode(shown).decode()


async def _recorded(run_id: str) -> set[str]:
    engine = Live.engine
    assert engine is not None, "a durable run executes only in a process with a DurableEngine"
    return set(engine.step_names(run_id))


@DBOS.workflow(name=RUN_WORKFLOW)
async def run_workflow(spec_json: str) -> str:
    """One durable run: the orchestrator from its first phase, or from a forked run's checkpoint (replay)."""
    recorded = msgspec.json.decode(spec_json, type=RunSpec)
    spec = Live.inputs.pop(recorded.run_id, recorded)
    workflow_id = DBOS.workflow_id or ""
    scope = build(
        spec,
        rerun_unsafe=workflow_id.endswith(RERUN_SUFFIX),
        supplied=operator_output if workflow_id.endswith(MARK_DONE_SUFFIX) else None,
    )
    try:
        async with scope as built:
            await _start(built, workflow_id, direct=spec.direct)
            if spec.source is not None:
                result = await _replay(spec, built)
            else:
                plan = msgspec.json.decode(spec.plan, type=Plan) if spec.plan else None
                result = await built.orchestrator.run(
                    spec.request, plan=plan, correlation_id=spec.run_id, started_at=spec.started_at
                )
            carried = await built.recorder.finish()
    except UnsafeToolInFlight as exc:
        message = f"{exc}: it may already have had its effect. {what_next(spec.run_id)}"
        stopped = Stopped(code=UNSAFE_CODE, message=message, tool=exc.tool, key=exc.key)
        return msgspec.json.encode(Outcome(stopped=stopped)).decode()
    except EventLogUnavailable as exc:  # an outcome, not an exception: DBOS would print its traceback
        return msgspec.json.encode(Outcome(unlogged=str(exc))).decode()
    if (lost := built.log.lost()) is not None:  # after the close: its last flush may lose records too
        result = result.with_lost_records(lost)
    result.warnings.extend(built.recorder.diverged)
    if spec.run_id in Live.results:  # the caller waits in this process: its copy, the record's fully redacted
        Live.results[spec.run_id] = result
    stored = built.orchestrator.redactor.struct(result, RunResult)
    return msgspec.json.encode(Outcome(result=stored, carried=carried)).decode()


async def _start(built: Built, workflow_id: str, *, direct: bool) -> None:
    """Tell the recorder what the record holds before the run's first call. A direct run's first execution knows
    it (nothing), and its log's first record must be written (as session.ready has the in-process run's): a log
    that takes no record stops it with EventLogUnavailable before anything is spent. Any other execution reads the
    run's steps — one query — and a direct run's, or one that finds steps, reads the log for what it holds. A queued
    run that finds none holds its records until its first written step, as it always has (so that its log holds
    nothing of it until a step is written)."""
    recorder = built.recorder
    if workflow_id in Live.fresh:
        Live.fresh.discard(workflow_id)
        recorder.start(again=False)
        built.log.open()
        return
    engine = Live.engine
    assert engine is not None, "a durable run executes only in a process with a DurableEngine"
    steps = await asyncio.to_thread(engine.steps, workflow_id)
    recorder.start(steps, again=True if steps or direct else None)


def what_next(run_id: str) -> str:
    return (
        f"Check, then run: aeon resume {run_id} --rerun-unsafe (it did not happen), or "
        f"aeon resume {run_id} --mark-done --output JSON (it did: JSON is what the tool returned)"
    )


async def operator_output(tool: str, key: str) -> Any:
    """The output the operator gave for the cut-off call `key` (aeon resume --mark-done), sent to this fork."""
    sent = await DBOS.recv_async(MARK_DONE_TOPIC, timeout_seconds=60)
    if not isinstance(sent, dict) or (sent.get("tool"), sent.get("key")) != (tool, key):
        raise RuntimeError(f"no output was given for tool {tool!r} ({key}), the call this run was forked to mark done")
    return sent["output"]


async def _replay(spec: RunSpec, built: Built) -> RunResult:
    """Go on from the checkpoint recorded at the start of pass `from_pass` of run `source`, as a new run."""
    assert spec.source is not None and spec.from_pass is not None
    source, from_pass = spec.source, spec.from_pass

    async def fork() -> str:
        state = RunState.decode(checkpoint_at(source, from_pass).encode())
        state.correlation_id = spec.run_id
        return state.encode().decode()

    forked, _ = await built.recorder.record(f"fork {source} p{from_pass}", fork)
    state = RunState.decode(forked.encode())
    built.log.bind(spec.run_id)
    built.log.emit(RunForkedRecord(source=source, from_pass=from_pass, request=state.request))
    return await built.orchestrator.resume(state)


def checkpoint_at(run_id: str, pass_number: int) -> str:
    """The run state recorded at the first phase boundary of pass `pass_number` of run `run_id`."""
    engine = Live.engine
    assert engine is not None
    made = recorded_outputs(engine.steps(run_id))
    status = engine.client.list_workflows(workflow_ids=[run_id], load_input=False)
    if status and status[0].status == "SUCCESS":
        made += msgspec.json.decode(str(status[0].output), type=Outcome).carried
    checkpoints = checkpoint_passes([name for name, _ in made])
    for name, output in made:  # in order: the first checkpoint of the pass is the boundary that starts it
        if checkpoints.get(name) == pass_number and output is not None:
            return str(output)
    passes = len({checkpoints[name] for name, _ in made if name in checkpoints})
    raise InputError(f"run {run_id} has no pass {pass_number} to replay from (it reached {passes} pass(es))")
