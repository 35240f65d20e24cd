"""`aeon runs` over the system database: each recorded run as it is listed — a finished one from its outcome, an
unfinished one from its last checkpoint and the answers recorded since (carried ones included)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from aeon.adapters.durable.approval import waiting_on
from aeon.adapters.durable.engine import DurableEngine
from aeon.adapters.durable.ops import alive
from aeon.adapters.durable.rows import RunRow, whole_run_seconds
from aeon.adapters.durable.runtime import RUN_WORKFLOW, Outcome, RunSpec, decode_outcome
from aeon.adapters.durable.steps import checkpoint_passes, recorded_outputs
from aeon.application.results import RunResult, RunStatus
from aeon.domain.approval import Pending
from aeon.domain.llm import Completion
from aeon.domain.run_state import RunState


def list_runs(engine: DurableEngine, limit: int = 100) -> list[RunRow]:
    """The most recent runs, newest first. An unfinished run shows what its last checkpoint recorded."""
    return [run_row(engine, w) for w in engine.client.list_workflows(name=RUN_WORKFLOW, sort_desc=True, limit=limit)]


def run_row(engine: DurableEngine, w: Any) -> RunRow:
    """One recorded run (a DBOS WorkflowStatus read with its input and output) as `aeon runs` lists it."""
    return read_run(engine, w)[0]


def read_run(engine: DurableEngine, w: Any) -> tuple[RunRow, Outcome | None]:
    """Run `w` as `aeon runs` lists it, and its outcome when it finished (decoded once, for whoever shows more)."""
    spec = msgspec.json.decode(w.input["args"][0], type=RunSpec) if w.input else None
    row = RunRow(
        id=w.workflow_id,
        request=spec.request if spec else "",
        status=w.status.lower(),
        passes=0,
        calls=0,
        tokens=0,
        started=spec.started_at if spec else "",
        duration=None,
        replay_of=spec.source if spec else None,
    )
    if w.status == "SUCCESS":
        outcome = decode_outcome(w.output)
        _finished(row, outcome)
        row.duration = whole_run_seconds(True, w.created_at or 0, w.updated_at or 0, row.duration)
        return row, outcome
    _so_far(row, engine, w.workflow_id)
    row.status = {"PENDING": "pending", "ENQUEUED": "queued"}.get(w.status, row.status)
    if w.status == "PENDING" and waiting_on(engine.client, w.workflow_id):
        row.status = "awaiting_approval"
    elif w.status == "PENDING":  # its process's pid or heartbeat: running, or cut off (resumable); else unknown
        row.status = {True: "running", False: "interrupted", None: "pending"}[alive(engine, w.executor_id or "")]
    return row, None


def _finished(row: RunRow, outcome: Outcome) -> None:
    if outcome.stopped is not None:
        row.status = "stopped"
        return
    result = outcome.result
    assert result is not None
    row.status, row.passes, row.calls = result.status.value, result.passes, result.budget.llm_calls
    if result.status is RunStatus.DENIED and result.error is not None:
        row.why = result.error.message
    row.tokens = result.budget.prompt_tokens + result.budget.completion_tokens
    if result.history is not None:  # the execution that finished it (a resumed run: the resumed part)
        row.duration = round(result.history.overall_statistics.total_time_seconds, 3)


def _so_far(row: RunRow, engine: DurableEngine, run_id: str) -> None:
    """An unfinished run's pass, calls and tokens: its last checkpoint's (one per pass), and the LLM calls recorded
    since."""
    made = recorded_outputs(engine.steps(run_id))
    found = last_checkpoint(made)
    if found is None:
        return
    at, state = found
    row.passes, row.calls = state.pass_number, state.budget.llm_calls
    row.tokens = state.budget.prompt_tokens + state.budget.completion_tokens
    for name, output in made[at + 1 :]:
        if name.startswith("llm ") and output is not None:
            row.calls += 1
            text = output[0]
            if text is not None:
                usage = msgspec.json.decode(text, type=Completion).usage
                row.tokens += usage.prompt_tokens + usage.completion_tokens


def last_checkpoint(made: list[tuple[str, Any]]) -> tuple[int, RunState] | None:
    """The position among a run's recorded outputs (recorded_outputs of engine.steps) of its last checkpoint, and
    the run state it holds."""
    names = checkpoint_passes([name for name, _ in made])
    at = max((i for i, (name, output) in enumerate(made) if name in names and output is not None), default=None)
    if at is None:
        return None
    return at, RunState.decode(str(made[at][1]).encode())


@dataclass(frozen=True)
class Recorded:
    """One run as its record holds it, for a page that shows all of it: its DBOS status (`workflow`, read with its
    input and output), the spec it started with, its result once it finished, and while it has not, the run state
    at its last checkpoint and the call it waits on."""

    workflow: Any
    spec: RunSpec | None
    result: RunResult | None = None
    checkpoint: RunState | None = None
    pending: Pending | None = None


def recorded(engine: DurableEngine, run_id: str) -> Recorded | None:
    """Run `run_id` read from the record now (None: no such run)."""
    found = engine.client.list_workflows(workflow_ids=[run_id], name=RUN_WORKFLOW)
    if not found:
        return None
    w = found[0]
    spec = msgspec.json.decode(w.input["args"][0], type=RunSpec) if w.input else None
    if w.status == "SUCCESS":
        return Recorded(w, spec, result=decode_outcome(w.output).result)
    if w.status not in ("PENDING", "ENQUEUED", "CANCELLED"):
        return Recorded(w, spec)
    last = last_checkpoint(recorded_outputs(engine.steps(run_id)))
    pending = waiting_on(engine.client, run_id) if w.status == "PENDING" else None
    return Recorded(w, spec, checkpoint=last[1] if last is not None else None, pending=pending)


def prime_decoders() -> None:
    """Build msgspec's decoding information for every type a reader of the record decodes, before a server's threads
    start: msgspec builds it on a type's first decode, and two threads doing that at once crash the process."""
    for kind in (Outcome, RunSpec, RunResult, RunState, Pending, Completion, RunRow):
        msgspec.json.Decoder(kind)
