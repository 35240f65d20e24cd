"""The durable start every front door hands the run use case, built once per door: one call on DbosRuns.start, with
what the run records to be rebuilt in another process, what this process lends it, and how the door leaves a run
that waits for a decision."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aeon.adapters.durable.awaiting import Announcing
from aeon.adapters.durable.composer import ToolRegistry
from aeon.adapters.durable.process import DbosProcess, spec_for
from aeon.adapters.durable.runs import DbosRuns
from aeon.adapters.durable.runtime import Outcome, RunSpec
from aeon.adapters.durable.served import ServedRuns
from aeon.application.ports import ApproverPort, ProgressPort
from aeon.application.results import RunResult
from aeon.domain.threads import ThreadContext

# DBOS is one per process, launched and destroyed around each direct run: such runs take turns
_ONE_ENGINE = threading.Lock()


@dataclass(frozen=True)
class Recorded:
    """What a durable run records to be rebuilt in any process — its config file and every layer over it, the paths
    made absolute — and what this process lends the run it starts: the `settings` it loaded (not loaded again), its
    `container` (one per process) and its `tools` (their MCP servers start once)."""

    settings: Any
    config: Path | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    container: Any | None = None
    tools: ToolRegistry | None = None

    def spec(
        self, process: DbosProcess, run_id: str, request: str, plan: str | None, thread: ThreadContext | None = None
    ) -> RunSpec:
        log_path, _ = process.factory.log_file(self.settings)
        overrides = dict(self.overrides)
        return spec_for(request, self.config, overrides, log_path=log_path, plan=plan, run_id=run_id, thread=thread)


def _nothing(run_id: str) -> AbstractContextManager[None]:
    return contextlib.nullcontext()


@dataclass(frozen=True)
class DurableStart:
    """The run use case's durable port at a door (its `start` one call on DbosRuns.start, as run `run_id`).
    `say`: the run's id, said once it has begun (needed after a crash); `stays`: around the run's execution here
    (the CLI: Ctrl-C and SIGTERM leave it on the record); `waiting`: shows a run left waiting for a decision (the
    CLI: and exits 6); `threaded`: an async door, the run in a worker thread; `served`: a long-lived server's engine
    (`aeon mcp`), the run executing on it, cancelled on the record when its call is; `release`: what the door lets go
    of before such a run executes on the process's shared tools."""

    process: DbosProcess
    recorded: Recorded
    say: Callable[[str], None] | None = None
    stays: Callable[[str], AbstractContextManager[None]] = _nothing
    waiting: Callable[[RunResult], None] | None = None
    threaded: bool = False
    served: ServedRuns | None = None
    release: Callable[[], object] | None = None

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
    ) -> Any:
        """The run's RunResult (an awaitable of it at an async door), or the run shown as waiting for approval."""
        spec = self.recorded.spec(self.process, run_id, request, plan, thread)
        shown = Announcing(run_id, progress, say=self.say) if self.say is not None else progress
        if self.served is not None:
            return self._served(self.served, spec, shown)
        if self.threaded:
            return asyncio.to_thread(self._here, spec, shown, approver, leave_when_waiting)
        return self._here(spec, shown, approver, leave_when_waiting)

    def _here(self, spec: RunSpec, progress: ProgressPort | None, approver: ApproverPort | None, leave: bool) -> Any:
        """The run as a DBOS workflow in this process, on an engine open meanwhile."""
        with self._direct(spec) as runs, self.stays(spec.run_id):
            outcome = _started(runs, spec, progress, approver, leave)
            if outcome.awaiting is not None:
                waiting = self.process.awaiting(runs, spec.run_id, outcome, self.recorded.settings, spec.request)
                if self.waiting is not None:
                    self.waiting(waiting)
                return waiting
        assert outcome.result is not None, "only a resumed run stops at a tool call cut off in flight"
        return outcome.result

    @contextlib.contextmanager
    def _direct(self, spec: RunSpec) -> Iterator[DbosRuns]:
        recorded = self.recorded
        lent = self.process.direct(spec, recorded.settings, container=recorded.container, tools=recorded.tools)
        with _ONE_ENGINE, lent as runs:
            yield runs

    async def _served(self, served: ServedRuns, spec: RunSpec, progress: ProgressPort | None) -> Any:
        if self.release is not None:
            await asyncio.to_thread(self.release)
        runs = await served.opened()
        outcome = await served.started([spec.run_id], asyncio.to_thread(_started, runs, spec, progress, None, True))
        shown = served.shown(spec.run_id, outcome, spec.request)
        assert isinstance(shown, RunResult), "a new run has no cut-off tool call to stop at"
        return shown


def _started(
    runs: DbosRuns, spec: RunSpec, progress: ProgressPort | None, approver: ApproverPort | None, leave: bool
) -> Outcome:
    return runs.start(
        spec.run_id, spec.request, plan=spec.plan, config=spec.config, overrides=spec.overrides,
        progress=progress, approver=approver, leave_when_waiting=leave, thread=spec.thread,
    )  # fmt: skip
