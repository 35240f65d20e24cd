"""The durable use cases on the record: start, resume, replay and answer a run (the engine open in this process)."""

from __future__ import annotations

import os
import socket
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
from dbos import DBOS, SetWorkflowID

from aeon.adapters.durable.approval import Decided, waiting_on
from aeon.adapters.durable.engine import DurableEngine
from aeon.adapters.durable.given import Given
from aeon.adapters.durable.runtime import (
    MARK_DONE_SUFFIX,
    MARK_DONE_TOPIC,
    RERUN_SUFFIX,
    RUN_WORKFLOW,
    Outcome,
    RunSpec,
    Stopped,
    decode_outcome,
    held,
)
from aeon.adapters.durable.steps import UNSAFE_CODE, in_flight_unsafe
from aeon.adapters.durable.workflow import checkpoint_at, run_workflow, what_next
from aeon.application.errors import AlreadyDecided, EventLogUnavailable, InputError
from aeon.application.ports import ApproverPort, ProgressPort, ToolPort
from aeon.domain.approval import ApprovalDecision, Pending
from aeon.domain.run_state import RunState

_RESUMABLE = ("PENDING", "ENQUEUED", "CANCELLED")


def executor_name(kind: str, name: str | None = None) -> str:
    """A one-off command gets a fresh executor id (it recovers nothing at launch); a batch or worker a stable one."""
    return f"{kind}-{name}" if name else f"{kind}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


_ONE_OFF = ("run", "resume", "replay", "mcp", "ui")  # the commands whose executor ids name their host and pid


def running_here(executor_id: str) -> int | None:
    """The pid of the live process on this host that a one-off command's executor id names, else None."""
    head, _, rest = executor_id.partition("-")
    host_pid, _, _ = rest.rpartition("-")
    host, _, pid = host_pid.rpartition("-")
    if head not in _ONE_OFF or host != socket.gethostname() or not pid.isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # alive, someone else's
        return int(pid)
    return int(pid)


def start(
    spec: RunSpec,
    progress: ProgressPort | None = None,
    *,
    inline: ApproverPort | None = None,
    leave_when_waiting: bool = False,
) -> Outcome:
    """Run `spec` as a workflow in this process and wait for its outcome (the engine must be open). `inline` asks
    this terminal about tool calls that need approval; `leave_when_waiting` returns as soon as the run waits for a
    decision nobody here can give (Outcome.awaiting): the run waits on the record, for `aeon approve` / `deny`."""
    runtime = held()
    if progress is not None:
        runtime.progress[spec.run_id] = progress
    if inline is not None:
        runtime.inline[spec.run_id] = inline
    settled = Settled()
    if leave_when_waiting:
        runtime.waiting[spec.run_id] = settled.waiting
    spec = msgspec.structs.replace(spec, direct=True)
    runtime.fresh.add(spec.run_id)  # a new id, started here now: its first execution, with nothing on the record
    runtime.results[spec.run_id] = None
    try:
        with SetWorkflowID(spec.run_id):
            handle = DBOS.start_workflow(run_workflow, runtime.recorded_input(spec))
        outcome = settled.outcome(handle) if leave_when_waiting else decode_outcome(handle.get_result())
    finally:
        caller = runtime.results.pop(spec.run_id, None)
        runtime.progress.pop(spec.run_id, None)  # the run's orchestrator has it: built when the run began
    if outcome.result is not None and caller is not None:  # run here: the caller's copy, not the record's
        outcome.result = caller
    if outcome.unlogged is not None:  # its first log record could not be written: it never started, spent nothing
        DBOS.delete_workflow(spec.run_id)
        raise EventLogUnavailable(outcome.unlogged)
    return outcome


class Settled:
    """Whichever comes first: the run's outcome, or the run waiting for a decision nobody here can give."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._box: dict[str, Any] = {}

    def waiting(self, pending: Pending, state: RunState) -> None:
        self._box.setdefault("awaiting", (pending, state))
        self._event.set()

    def outcome(self, handle: Any) -> Outcome:
        def finish() -> None:
            try:
                self._box.setdefault("result", handle.get_result())
            except BaseException as exc:  # handed to the caller's thread
                self._box.setdefault("error", exc)
            self._event.set()

        threading.Thread(target=finish, name="aeon-outcome", daemon=True).start()
        self._event.wait()
        if "result" in self._box:
            return decode_outcome(self._box["result"])
        if "error" in self._box:
            raise self._box["error"]
        pending, state = self._box["awaiting"]
        return Outcome(awaiting=pending, state=state)


def resume(engine: DurableEngine, run_id: str, *, rerun_unsafe: bool, given: Given | None = None) -> Outcome:
    """Go on with an interrupted run: the recorded steps are taken from the record, the rest executed here.

    A non-idempotent tool call in flight at the crash stops it (Outcome.stopped) unless `rerun_unsafe` or `given`;
    then the run goes on as a DBOS fork (`RUN_ID.rerun-unsafe`, `RUN_ID.mark-done`) that reuses every other record
    and re-runs that tool call, or records `given` as its output without running it."""
    status = _status(engine, run_id)
    forks = [run_id + RERUN_SUFFIX, run_id + MARK_DONE_SUFFIX]
    fork = engine.client.list_workflows(workflow_ids=forks, load_input=False, load_output=False)
    if fork:  # it went on as a fork --rerun-unsafe or --mark-done made: resume that one
        return resume(engine, fork[0].workflow_id, rerun_unsafe=rerun_unsafe)
    if status.status == "SUCCESS":
        outcome = decode_outcome(status.output)
        if outcome.stopped is None or not (rerun_unsafe or given is not None):
            return outcome
        return _fork_at_unsafe(engine, run_id, given)
    if status.status not in _RESUMABLE:
        raise InputError(f"run {run_id} cannot be resumed: it ended with status {status.status} ({status.error})")
    if status.status == "PENDING" and (pid := running_here(status.executor_id or "")) is not None:
        raise InputError(f"run {run_id} is still running in process {pid} on this host; resume it once that stops")
    found = in_flight_unsafe(engine.step_names(run_id))
    if found is not None:
        if not (rerun_unsafe or given is not None):
            tool, key = found
            message = (
                f"tool {tool!r} ({key}) was running when the run stopped and is not idempotent: it may already have "
                f"had its effect. {what_next(run_id)}"
            )
            return Outcome(stopped=Stopped(code=UNSAFE_CODE, message=message, tool=tool, key=key))
        engine.client.cancel_workflow(run_id)  # nobody recovers the original: the fork goes on in its place
        return _fork_at_unsafe(engine, run_id, given)
    if given is not None:
        raise InputError(f"run {run_id} has no tool call cut off in flight to mark done (aeon resume {run_id})")
    engine.queue(engine.own_queue)  # a queue only this process serves: the run goes on here
    settled = Settled()
    held().waiting[run_id] = settled.waiting  # a call that needs a decision nobody here can give: leave it waiting
    handle = DBOS.resume_workflow(run_id, queue_name=engine.own_queue)
    return settled.outcome(handle)


def pending_approval(engine: DurableEngine, run_id: str) -> Pending:
    """The call run `run_id` waits on and nobody has decided yet; AlreadyDecided when a decision on it (or, once the
    run no longer waits, its latest one) is on the record, InputError when it waits on none (never asked)."""
    status = _status(engine, run_id)
    pending = waiting_on(engine.client, run_id)
    waits = pending is not None and status.status in ("PENDING", "ENQUEUED")
    made = engine.decisions.of(run_id, pending.request.key if waits and pending is not None else None)
    if made is not None:
        raise already_decided(made)
    if pending is None or not waits:
        said = "finished" if status.status == "SUCCESS" else status.status.lower()
        raise InputError(f"run {run_id} is not waiting for approval (it is {said}; aeon runs shows every run)")
    return pending


def already_decided(made: Decided) -> AlreadyDecided:
    return AlreadyDecided(f"run {made.run_id}: its tool call {made.key} was already {made.said()}; nothing was changed")


def tools_of(engine: DurableEngine, run_id: str) -> ToolPort:
    """The tools run `run_id` was configured with (its recorded config file and overrides), as it sees them."""
    status = _status(engine, run_id)
    return held().compose.tools(msgspec.json.decode(status.input["args"][0], type=RunSpec))


def answer(engine: DurableEngine, run_id: str, decision: ApprovalDecision, *, go_on: bool) -> Outcome | None:
    """Send `decision` on the call run `run_id` waits on (its edited arguments checked by the run use case,
    application/runs/recorded.py) — the one operation behind `aeon approve` / `aeon deny` and the buttons of
    `aeon ui`. With `go_on`, finish the run here (carry_on) and return its outcome."""
    pending = pending_approval(engine, run_id)
    if (made := engine.decisions.claim(run_id, pending.request.key, decision)) is not None:
        raise already_decided(made)  # another decision came first: it stands, this one was not sent
    return carry_on(engine, run_id) if go_on else None


def carry_on(engine: DurableEngine, run_id: str) -> Outcome:
    """Go on with a run whose decision was sent: here, or by waiting for the process that holds it, when one does."""
    status = _status(engine, run_id)
    if status.status == "PENDING" and _held(engine, status.executor_id or ""):
        return decode_outcome(DBOS.retrieve_workflow(run_id).get_result())  # its process goes on with it
    return resume(engine, run_id, rerun_unsafe=False)


def _held(engine: DurableEngine, executor_id: str) -> bool:
    """Whether a live process executes the runs of `executor_id`: one on this host, or a worker whose lease holds."""
    return alive(engine, executor_id) is True


def alive(engine: DurableEngine, executor_id: str) -> bool | None:
    """Whether the process behind `executor_id` still runs, from what it leaves: a one-off command of this host
    its pid; a batch or worker its lease's heartbeat (none: it left). None: no way to tell (a one-off command of
    another host keeps no heartbeat)."""
    if running_here(executor_id) is not None:
        return True
    lease = engine.leases.of([executor_id]).get(executor_id)
    if lease is not None:
        return lease.expires_at > engine.leases.now()
    head, _, rest = executor_id.partition("-")
    if head in _ONE_OFF:
        host = rest.rpartition("-")[0].rpartition("-")[0]
        return False if host == socket.gethostname() else None
    return False if head in ("batch", "worker") else None


def _fork_at_unsafe(engine: DurableEngine, run_id: str, given: Given | None) -> Outcome:
    """Fork the run right after the start of its cut-off tool call: every step before is reused; that call runs
    again, or (`given`) takes the operator's output, sent to the fork as a message it waits for."""
    steps = engine.client.list_workflow_steps(run_id, load_output=False)
    found = in_flight_unsafe([s["function_name"] for s in steps])
    assert found is not None, "only a run stopped by an unsafe tool call is forked to finish it"
    tool, key = found
    marker = next(s["function_id"] for s in steps if s["function_name"] == f"tool-start {key} {tool}")
    start_step = marker + 1  # the fork reuses every step before this one and executes the rest
    fork_id = run_id + (MARK_DONE_SUFFIX if given is not None else RERUN_SUFFIX)
    with SetWorkflowID(fork_id):
        handle = DBOS.fork_workflow(run_id, start_step)
    if given is not None:
        DBOS.send(fork_id, {"tool": tool, "key": key, "output": given.output}, MARK_DONE_TOPIC)
    return decode_outcome(handle.get_result())


def _status(engine: DurableEngine, run_id: str) -> Any:
    found = engine.client.list_workflows(workflow_ids=[run_id], name=RUN_WORKFLOW)
    if not found:
        raise InputError(f"unknown run id {run_id!r} (aeon runs lists the recorded runs)")
    return found[0]


def replay(
    engine: DurableEngine,
    source_id: str,
    from_pass: int,
    config: Path | None,
    progress: ProgressPort | None = None,
    new_id: str | None = None,
) -> Outcome:
    """A new run forked from run `source_id` at the start of pass `from_pass`: what came before is the record's
    (no call before that pass is made again); from that pass on, `config` (default: the source's) answers."""
    status = _status(engine, source_id)
    source = msgspec.json.decode(status.input["args"][0], type=RunSpec)
    checkpoint_at(source_id, from_pass)  # an unknown pass is an input error before anything starts
    spec = msgspec.structs.replace(
        source,
        run_id=new_id or str(uuid.uuid4()),
        started_at=datetime.now(UTC).isoformat(),
        config=str(config.resolve()) if config is not None else source.config,
        source=source_id,
        from_pass=from_pass,
    )
    return start(spec, progress)
