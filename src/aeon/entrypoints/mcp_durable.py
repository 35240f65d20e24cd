"""The durable side of `aeon mcp`: runs started, resumed and listed through the DurableRuns port on the server's one
engine (adapters/durable/served.py), as `aeon run`, `resume` and `runs` do. DBOS is imported only when a call needs
it."""

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
    from aeon.adapters.durable.runtime import Stopped
    from aeon.adapters.durable.served import ServedRuns


class DurableCalls:
    """Durable runs for the server of one config file."""

    def __init__(self, config: Path | None) -> None:
        self.config = config
        self._served: ServedRuns | None = None

    async def run(
        self, request: str, plan: Any, overrides: dict[str, Any], settings: Settings, relay: Relay
    ) -> RunResult:
        """A new durable run, in this process: its result, or the run waiting for approval."""
        from aeon.adapters.durable.process import spec_for

        served = self._server()
        runs = await served.opened()
        spec = spec_for(request, self.config, overrides, log_path=settings.log.path, plan=plan)
        relay.status(f"durable run {spec.run_id} (after a crash: aeon resume {spec.run_id})")
        start = partial(runs.start, spec.run_id, request, plan=spec.plan, config=spec.config, overrides=spec.overrides)
        work = asyncio.to_thread(start, progress=relay.display, leave_when_waiting=True)
        shown = served.shown(spec.run_id, await guarded(work, on_cancel=partial(served.cancel, [spec.run_id])), request)
        assert isinstance(shown, RunResult), "a new run has no cut-off tool call to stop at"
        return shown

    async def resume(self, run_id: str, relay: Relay) -> RunResult | Stopped:
        """Run `run_id` finished here (or its recorded result), waiting for approval, or stopped before a cut-off
        tool call that is not idempotent (a person checks its effect first: --rerun-unsafe or --mark-done)."""
        served = self._server()
        runs = await served.opened()
        work = asyncio.to_thread(runs.resume, run_id, rerun_unsafe=False, progress=relay.display)
        return served.shown(run_id, await guarded(work, on_cancel=partial(served.cancel, runs.resumed_as(run_id))))

    async def runs(self, status: str | None, limit: int, *, most: int) -> list[RunRow]:
        """The newest runs as `aeon runs` lists them (with `status` only: among the `most` newest), redacted."""
        rows = await asyncio.to_thread((await self._server().opened()).list, most if status else limit)
        redactor = redactor_for(load_settings(self.config))
        return [redactor.struct(row, RunRow) for row in rows if status in (None, row.status)][:limit]

    def _server(self) -> ServedRuns:
        if self._served is None:
            from aeon.adapters.durable.served import ServedRuns
            from aeon.entrypoints.durable.factory import process

            self._served = ServedRuns(process(), partial(load_settings, self.config))
        return self._served

    async def leave(self, code: int, *, now: bool = False) -> None:
        """Shut the engine down and return — or, when a run of this process may still need it (ServedRuns.close),
        exit as a crash would (the exit hooks run). `now`: exit in any case."""
        if self._served is not None and not await self._served.close():
            leave_pending(code)
        if now:
            leave_pending(code)
