"""The DurableRuns port on DBOS: each operation one of the use cases on the record (ops.py), on this process's
engine. The clock that dates a started run is a constructor argument; the caller gives the run's id."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aeon.adapters.durable import ops
from aeon.adapters.durable.batch import Tally, enqueue
from aeon.adapters.durable.engine import DurableEngine
from aeon.adapters.durable.given import Given
from aeon.adapters.durable.rows import RunRow
from aeon.adapters.durable.runtime import (
    MARK_DONE_SUFFIX,
    RERUN_SUFFIX,
    RUN_WORKFLOW,
    Outcome,
    RunSpec,
    decode_outcome,
    held,
)
from aeon.application.ports import ApproverPort, DurableRuns, ProgressPort, ToolPort
from aeon.application.results import RunResult
from aeon.domain.approval import ApprovalDecision, Pending
from aeon.domain.threads import ThreadContext

if TYPE_CHECKING:
    from aeon.adapters.durable.status import Recorded


def _now() -> str:
    return datetime.now(UTC).isoformat()


class DbosRuns:
    """Durable runs on the system database `engine` is open on (`with engine:` around the calls)."""

    def __init__(self, engine: DurableEngine, *, now: Callable[[], str] = _now) -> None:
        self.engine, self._now = engine, now

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
    ) -> Outcome:
        spec = RunSpec(
            run_id=run_id,
            request=request,
            started_at=self._now(),
            config=config,
            overrides=dict(overrides or {}),
            plan=plan,
            thread=thread,
        )
        return ops.start(spec, progress, inline=approver, leave_when_waiting=leave_when_waiting)

    def resume(
        self,
        run_id: str,
        *,
        rerun_unsafe: bool = False,
        given: Given | None = None,
        progress: ProgressPort | None = None,
    ) -> Outcome:
        """`given`: the output of a cut-off tool call (`--mark-done`); `progress`: shown while it executes here."""
        runtime = held()
        if progress is not None:
            runtime.progress[run_id] = progress
        try:
            return ops.resume(self.engine, run_id, rerun_unsafe=rerun_unsafe, given=given)
        finally:
            if progress is not None:
                runtime.progress.pop(run_id, None)

    def fork(
        self,
        run_id: str,
        from_pass: int,
        *,
        config: str | None = None,
        progress: ProgressPort | None = None,
        new_id: str | None = None,
    ) -> Outcome:
        return ops.replay(self.engine, run_id, from_pass, Path(config) if config else None, progress, new_id)

    def answer(self, run_id: str, decision: ApprovalDecision, *, go_on: bool) -> Outcome | None:
        return ops.answer(self.engine, run_id, decision, go_on=go_on)

    def pending(self, run_id: str) -> Pending:
        """The call run `run_id` waits on and nobody has decided yet (AlreadyDecided, InputError otherwise)."""
        return ops.pending_approval(self.engine, run_id)

    def tools(self, run_id: str) -> ToolPort:
        """The tools run `run_id` was configured with, as it sees them (to check edited arguments)."""
        return ops.tools_of(self.engine, run_id)

    def carry_on(self, run_id: str) -> Outcome:
        """Go on with a run whose decision was sent: here, or by waiting for the process that holds it."""
        return ops.carry_on(self.engine, run_id)

    def cancel(self, run_ids: Sequence[str]) -> None:
        """Cancel runs on the record: DBOS stops each at its next step, writing nothing more to its log, and
        `aeon resume` finishes it. A run that does not exist or already finished is left as it is."""
        for run_id in run_ids:
            with contextlib.suppress(Exception):
                self.engine.client.cancel_workflow(run_id)

    @staticmethod
    def resumed_as(run_id: str) -> list[str]:
        """The runs a resume of `run_id` may go on as: itself, or its fork past a cut-off tool call."""
        return [run_id, run_id + RERUN_SUFFIX, run_id + MARK_DONE_SUFFIX]

    def enqueue(self, batch: str, requests: list[str], spec_for: Callable[[str], RunSpec]) -> list[str]:
        """Batch `batch` on the queue: one run per request, ids `batch-<batch>-<line>` (one on the record stays)."""
        return enqueue(batch, requests, spec_for)

    def tally(self, ids: list[str], document: Callable[[RunResult], dict[str, Any]]) -> Tally:
        """What the batch of runs `ids` has done so far, read from the record at each `poll()`."""
        return Tally(self.engine, ids, document)

    def list(self, limit: int = 100) -> Sequence[RunRow]:
        from aeon.adapters.durable.status import list_runs

        return list_runs(self.engine, limit)

    def outcome(self, run_id: str) -> Outcome | None:
        found = self.engine.client.list_workflows(workflow_ids=[run_id], name=RUN_WORKFLOW)
        if not found or found[0].status != "SUCCESS":
            return None
        return decode_outcome(found[0].output)

    def recorded(self, run_id: str) -> Recorded | None:
        """Run `run_id` as its record holds it (status, spec, result or last checkpoint, the call it waits on)."""
        from aeon.adapters.durable.status import recorded

        return recorded(self.engine, run_id)

    def held_here(self, run_id: str) -> bool:
        """Whether run `run_id` is unfinished and executed by this process (taken on after a decision)."""
        found = self.engine.client.list_workflows(workflow_ids=[run_id], load_input=False, load_output=False)
        return bool(found) and found[0].status == "PENDING" and found[0].executor_id == self.engine.executor_id


_PORT: type[DurableRuns[Outcome, RunRow]] = DbosRuns  # mypy checks DbosRuns against the port it satisfies
