"""The durable side of `aeon mcp`: one DBOS engine for the server's life, opened on the first call that needs it;
durable runs started, resumed and listed through it, as `aeon run --durable`, `resume` and `runs` do. DBOS is imported
only when a call needs it."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from aeon.adapters.durable.rows import RunRow
from aeon.application.results import RunResult
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.durable.options import leave_pending
from aeon.entrypoints.durable.waiting import awaiting_result, recorded_awaiting
from aeon.entrypoints.mcp_calls import Relay, guarded
from aeon.entrypoints.secrets import redactor_for

if TYPE_CHECKING:
    from aeon.adapters.durable.engine import DurableEngine
    from aeon.adapters.durable.runtime import Stopped


class DurableCalls:
    """Durable runs for the server of one config file. A run cancelled by its client is cancelled on DBOS; a run
    that waits for approval waits in this process's DBOS: either way DBOS must not be shut down under it at exit."""

    def __init__(self, config: Path | None) -> None:
        self.config = config
        self._engine: DurableEngine | None = None
        self._lock = asyncio.Lock()
        self._left_running = False  # see leave

    async def run(
        self, request: str, plan: Any, overrides: dict[str, Any], settings: Settings, relay: Relay
    ) -> RunResult:
        """A new durable run, in this process: its result, or the run waiting for approval."""
        from aeon.adapters.durable import ops as ops
        from aeon.entrypoints.durable import compose
        from aeon.entrypoints.durable.compose import runtime

        engine = await self._engine_open()
        encoded = msgspec.json.encode(plan).decode() if plan is not None else None
        spec = compose.spec_for(request, self.config, overrides, log_path=settings.log.path, plan=encoded)
        relay.status(f"durable run {spec.run_id} (after a crash: aeon resume {spec.run_id})")
        try:
            work = asyncio.to_thread(ops.start, spec, relay.display, leave_when_waiting=True)
            outcome = await guarded(work, on_cancel=partial(self._cancel, engine, [spec.run_id]))
        finally:
            runtime().progress.pop(spec.run_id, None)
        if outcome.awaiting is not None:
            self._left_running = True
            return awaiting_result(spec.run_id, request, outcome.awaiting)
        assert outcome.result is not None, "a new run has no cut-off tool call to stop at"
        return outcome.result

    async def resume(self, run_id: str, relay: Relay) -> RunResult | Stopped:
        """Run `run_id` finished here (or its recorded result), waiting for approval, or stopped before a cut-off
        tool call that is not idempotent (a person checks its effect first: --rerun-unsafe or --mark-done)."""
        from aeon.adapters.durable.runs import DbosRuns
        from aeon.entrypoints.durable.compose import runtime

        engine = await self._engine_open()
        runtime().progress[run_id] = relay.display
        try:
            work = asyncio.to_thread(DbosRuns(engine).resume, run_id, rerun_unsafe=False)
            outcome = await guarded(work, on_cancel=partial(self._cancel, engine, DbosRuns.resumed_as(run_id)))
        finally:
            runtime().progress.pop(run_id, None)
        if outcome.stopped is not None:
            return outcome.stopped
        if outcome.awaiting is not None:
            self._left_running = True
            return recorded_awaiting(engine, run_id, outcome.awaiting)
        assert outcome.result is not None
        return outcome.result

    async def runs(self, status: str | None, limit: int, *, most: int) -> list[RunRow]:
        """The newest runs as `aeon runs` lists them (with `status` only: among the `most` newest), redacted."""
        from aeon.adapters.durable.runs import DbosRuns

        engine = await self._engine_open()
        rows = await asyncio.to_thread(DbosRuns(engine).list, most if status else limit)
        redactor = redactor_for(load_settings(self.config))
        return [redactor.struct(row, RunRow) for row in rows if status in (None, row.status)][:limit]

    async def _engine_open(self) -> DurableEngine:
        async with self._lock:
            if self._engine is None:
                from aeon.entrypoints.durable import compose

                engine = compose.engine_for(load_settings(self.config), "mcp")
                await asyncio.to_thread(engine.__enter__)
                self._engine = engine
            return self._engine

    async def _cancel(self, engine: DurableEngine, run_ids: list[str]) -> None:
        """Cancel the runs on the record (DbosRuns.cancel); the step under way goes on in DBOS's thread meanwhile."""
        from aeon.adapters.durable.runs import DbosRuns

        self._left_running = True
        await asyncio.to_thread(DbosRuns(engine).cancel, run_ids)

    async def leave(self, code: int, *, now: bool = False) -> None:
        """Shut the engine down and return — or, when a run of this process was cancelled (it may still be in a
        step) or waits for approval here, exit as a crash would (the exit hooks run): shutting DBOS down would cancel
        it inside, and the kernel would end it in its log as interrupted, a log that `aeon resume` or `aeon approve`
        then goes on writing. `now`: exit in any case."""
        if self._left_running:
            leave_pending(code)
        if self._engine is not None:
            engine, self._engine = self._engine, None
            await asyncio.to_thread(engine.__exit__, None, None, None)
        if now:
            leave_pending(code)
