"""Durable runs for a long-lived server (`aeon mcp`): one engine for the server's life, opened on the first call that
needs it, and shut down at the end only when no run of the process may still need it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from aeon.adapters.durable.process import DbosProcess
from aeon.adapters.durable.runs import DbosRuns
from aeon.adapters.durable.runtime import Outcome, Stopped
from aeon.application.results import RunResult


class ServedRuns:
    """A run cancelled by its client is cancelled on DBOS; a run that waits for approval waits in this process's
    DBOS: either way DBOS must not be shut down under it (`close` says so)."""

    def __init__(self, process: DbosProcess, settings: Callable[[], Any]) -> None:
        self._process, self._settings = process, settings
        self._runs: DbosRuns | None = None
        self._lock = asyncio.Lock()
        self._left_running = False

    async def opened(self) -> DbosRuns:
        async with self._lock:
            if self._runs is None:
                engine = self._process.engine(self._settings(), "mcp")
                self._runs = DbosRuns(await asyncio.to_thread(engine.__enter__))
            return self._runs

    async def cancel(self, run_ids: Sequence[str]) -> None:
        """Cancel the runs on the record (DbosRuns.cancel); the step under way goes on in DBOS's thread meanwhile."""
        self._left_running = True
        if self._runs is not None:
            await asyncio.to_thread(self._runs.cancel, run_ids)

    async def started(self, run_ids: Sequence[str], work: Coroutine[Any, Any, Outcome]) -> Outcome:
        """The outcome of `work` on runs `run_ids`, executing in DBOS's thread: a cancelled call cannot cancel that
        thread, so it cancels the runs on the record instead, and does not wait for it (the caller cancels this
        once: `aeon mcp`'s guarded)."""
        task = asyncio.ensure_future(work)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(_settled)
            await self.cancel(run_ids)
            raise

    def shown(self, run_id: str, outcome: Outcome, request: str | None = None) -> RunResult | Stopped:
        """What a call returns of run `run_id`'s outcome: its result, why it stopped, or the run waiting (in this
        process's DBOS) for approval."""
        if outcome.stopped is not None:
            return outcome.stopped
        if outcome.awaiting is not None:
            assert self._runs is not None
            self._left_running = True
            shown = Outcome(awaiting=outcome.awaiting)  # as the record shows it: no history here
            return self._process.awaiting(self._runs, run_id, shown, request=request)
        assert outcome.result is not None
        return outcome.result

    async def close(self) -> bool:
        """Shut the engine down and say True — or, when a run of this process was cancelled (it may still be in a
        step) or waits for approval here, say False and leave DBOS up: shutting it down would cancel the run inside,
        and the kernel would end it in its log as interrupted, a log `aeon resume` or `aeon approve` then goes on
        writing (the caller leaves as a crash would)."""
        if self._left_running:
            return False
        if self._runs is not None:
            engine, self._runs = self._runs.engine, None
            await asyncio.to_thread(engine.__exit__, None, None, None)
        return True


def _settled(task: asyncio.Future[Any]) -> None:
    """Take the outcome of work no one waits for any more (a cancelled run's wait raises when it learns)."""
    if not task.cancelled():
        task.exception()
