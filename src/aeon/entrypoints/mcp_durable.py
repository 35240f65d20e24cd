"""The durable side of `aeon mcp`: runs started, resumed and listed through the DurableRuns port on the server's one
engine (adapters/durable/served.py), as `aeon run`, `resume` and `runs` do. DBOS is imported only when a call needs
it."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aeon.adapters.durable.rows import RunRow
from aeon.adapters.mcp_relay import Relay
from aeon.application.results import RunResult
from aeon.application.runs import RecordedRuns
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.durable.options import leave_pending
from aeon.entrypoints.secrets import redactor_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from aeon.adapters.durable.runtime import Stopped
    from aeon.adapters.durable.served import ServedRuns
    from aeon.application.runs import Starts
    from aeon.entrypoints.container import Container


class DurableCalls:
    """Durable runs for the server of one config file."""

    def __init__(self, config: Path | None) -> None:
        self.config = config
        self._served: ServedRuns | None = None

    def start(self, container: Container, overrides: dict[str, Any], say: Callable[[str], None]) -> Starts:
        """A call's durable port: the run on the server's one engine, its id said to the call's progress (`say`),
        this call's MCP servers stopped first (the run uses the process's shared tools)."""
        from aeon.adapters.durable.starts import DurableStart, Recorded
        from aeon.entrypoints.durable.factory import process

        recorded = Recorded(container.settings(), self.config, overrides)
        return DurableStart(process(), recorded, say=say, served=self._server(), release=container.tools.shutdown)

    async def resume(self, run_id: str, relay: Relay) -> RunResult | Stopped:
        """Run `run_id` finished here (or its recorded result), waiting for approval, or stopped before a cut-off
        tool call that is not idempotent (a person checks its effect first: --rerun-unsafe or --mark-done)."""
        served = self._server()
        runs = await served.opened()
        work = asyncio.to_thread(RecordedRuns(runs).resume, run_id, progress=relay.display)
        return served.shown(run_id, await served.started(runs.resumed_as(run_id), work))

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
