"""The durable run: one DBOS workflow around Aeon's orchestrator, built for it by the process's DurableRuntime, with
its LLM calls, tool calls and phase checkpoints as recorded steps and a log a re-execution does not write twice."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from dbos import DBOS

from aeon.adapters.durable.runtime import (
    MARK_DONE_SUFFIX,
    MARK_DONE_TOPIC,
    RERUN_SUFFIX,
    RUN_WORKFLOW,
    Built,
    Outcome,
    RunSpec,
    Stopped,
    held,
)
from aeon.adapters.durable.steps import UNSAFE_CODE, UnsafeToolInFlight, checkpoint_passes, recorded_outputs
from aeon.adapters.durable.threads import store_for
from aeon.application.errors import EventLogUnavailable, InputError
from aeon.application.results import RunResult
from aeon.application.threads import Threads
from aeon.domain.log_run import RunForkedRecord
from aeon.domain.plan import Plan
from aeon.domain.run_state import RunState


@DBOS.workflow(name=RUN_WORKFLOW)
async def run_workflow(spec_json: str) -> str:
    """One durable run: the orchestrator from its first phase, or from a forked run's checkpoint (replay)."""
    runtime = held()
    recorded = msgspec.json.decode(spec_json, type=RunSpec)
    spec = runtime.inputs.pop(recorded.run_id, recorded)
    workflow_id = DBOS.workflow_id or ""
    scope = runtime.compose.build(
        spec,
        runtime,
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
                    spec.request, plan=plan, correlation_id=spec.run_id, started_at=spec.started_at, thread=spec.thread
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
    if spec.run_id in runtime.results:  # the caller waits in this process: its copy, the record's fully redacted
        runtime.results[spec.run_id] = result
    stored = built.orchestrator.redactor.struct(result, RunResult)
    if spec.thread is not None:  # idempotent by run id: a run executed again after a crash leaves one turn
        threads = Threads(store_for(runtime.opened().url), built.orchestrator.redactor)
        await asyncio.to_thread(threads.record, spec.thread.name, stored)
    return msgspec.json.encode(Outcome(result=stored, carried=carried)).decode()


async def _start(built: Built, workflow_id: str, *, direct: bool) -> None:
    """Tell the recorder what the record holds before the run's first call. A direct run's first execution knows
    it (nothing), and its log's first record must be written (as session.ready has the in-process run's): a log
    that takes no record stops it with EventLogUnavailable before anything is spent. Any other execution reads the
    run's steps — one query — and a direct run's, or one that finds steps, reads the log for what it holds. A queued
    run that finds none holds its records until its first written step, as it always has (so that its log holds
    nothing of it until a step is written)."""
    runtime = held()
    recorder = built.recorder
    if workflow_id in runtime.fresh:
        runtime.fresh.discard(workflow_id)
        recorder.start(again=False)
        built.log.open()
        return
    steps = await asyncio.to_thread(runtime.opened().steps, workflow_id)
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
    engine = held().opened()
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
