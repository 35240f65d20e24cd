"""The durable side of `aeon mcp`: one DBOS engine for the server's life, opened on the first call that needs it;
durable runs started, resumed and listed through the DurableRuns port (DbosRuns), as `aeon run`, `resume` and `runs`
do. DBOS is imported only when a call needs it."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aeon.adapters.durable.rows import RunRow
from aeon.application.results import RunResult
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.durable.options import leave_pending
from aeon.entrypoints.mcp_calls import Relay, guarded
from aeon.entrypoints.secrets import redactor_for

if TYPE_CHECKING:
    from aeon.adapters.durable.runs import DbosRuns
    from aeon.adapters.durable.runtime import Outcome, Stopped


class DurableCalls:
    """Durable runs for the server of one config file. A run cancelled by its client is cancelled on DBOS; a run
    that waits for approval waits in this process's DBOS: either way DBOS must not be shut down under it at exit."""

    def __init__(self, config: Path | None) -> None:
        self.config = config
        self._runs: DbosRuns | None = None
        self._lock = asyncio.Lock()
        self._left_running = False  # see leave

    async def run(
        self, request: str, plan: Any, overrides: dict[str, Any], settings: Settings, relay: Relay
    ) -> RunResult:
        """A new durable run, in this process: its result, or the run waiting for approval."""
        from aeon.adapters.durable.process import spec_for

        runs = await self._opened()
        spec = spec_for(request, self.config, overrides, log_path=settings.log.path, plan=plan)
        relay.status(f"durable run {spec.run_id} (after a crash: aeon resume {spec.run_id})")
        start = partial(runs.start, spec.run_id, request, plan=spec.plan, config=spec.config, overrides=spec.overrides)
        work = asyncio.to_thread(start, progress=relay.display, leave_when_waiting=True)
        outcome = await guarded(work, on_cancel=partial(self._cancel, [spec.run_id]))
        return self._shown(runs, spec.run_id, outcome, request)

    async def resume(self, run_id: str, relay: Relay) -> RunResult | Stopped:
        """Run `run_id` finished here (or its recorded result), waiting for approval, or stopped before a cut-off
        tool call that is not idempotent (a person checks its effect first: --rerun-unsafe or --mark-done)."""
        runs = await self._opened()
        work = asyncio.to_thread(runs.resume, run_id, rerun_unsafe=False, progress=relay.display)
        outcome = await guarded(work, on_cancel=partial(self._cancel, runs.resumed_as(run_id)))
        return outcome.stopped if outcome.stopped is not None else self._shown(runs, run_id, outcome, None)

    def _shown(self, runs: DbosRuns, run_id: str, outcome: Outcome, request: str | None) -> RunResult:
        if outcome.awaiting is not None:
            from aeon.entrypoints.durable.factory import process

            self._left_running = True
            return process().awaiting(runs, run_id, outcome, request=request)
        assert outcome.result is not None
        return outcome.result

    async def runs(self, status: str | None, limit: int, *, most: int) -> list[RunRow]:
        """The newest runs as `aeon runs` lists them (with `status` only: among the `most` newest), redacted."""
        rows = await asyncio.to_thread((await self._opened()).list, most if status else limit)
        redactor = redactor_for(load_settings(self.config))
        return [redactor.struct(row, RunRow) for row in rows if status in (None, row.status)][:limit]

    async def _opened(self) -> DbosRuns:
        async with self._lock:
            if self._runs is None:
                from aeon.adapters.durable.runs import DbosRuns
                from aeon.entrypoints.durable.factory import process

                engine = process().engine(load_settings(self.config), "mcp")
                self._runs = DbosRuns(await asyncio.to_thread(engine.__enter__))
            return self._runs

    async def _cancel(self, run_ids: list[str]) -> None:
        """Cancel the runs on the record (DbosRuns.cancel); the step under way goes on in DBOS's thread meanwhile."""
        self._left_running = True
        if self._runs is not None:
            await asyncio.to_thread(self._runs.cancel, run_ids)

    async def leave(self, code: int, *, now: bool = False) -> None:
        """Shut the engine down and return — or, when a run of this process was cancelled (it may still be in a
        step) or waits for approval here, exit as a crash would (the exit hooks run): shutting DBOS down would cancel
        it inside, and the kernel would end it in its log as interrupted, a log that `aeon resume` or `aeon approve`
        then goes on writing. `now`: exit in any case."""
        if self._left_running:
            leave_pending(code)
        if self._runs is not None:
            engine, self._runs = self._runs.engine, None
            await asyncio.to_thread(engine.__exit__, None, None, None)
        if now:
            leave_pending(code)
