"""What an MCP tool call of `aeon mcp` needs around its work in the SDK's server session: its progress relayed as
`aeon run` shows it, and a client's cancellation delivered to its run exactly once."""

from __future__ import annotations

import asyncio
import contextlib
import io
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import anyio
from mcp.server.session import ServerSession

from aeon.adapters.console import ConsoleProgress
from aeon.domain.text import terminal_safe

T = TypeVar("T")


class _Lines(io.StringIO):
    """A text stream that hands each whole, non-blank line it is written to `emit`."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        super().__init__()
        self._emit, self._part = emit, ""

    def write(self, text: str) -> int:
        *whole, self._part = (self._part + text).split("\n")
        for line in whole:
            if line.strip():
                self._emit(line)
        return len(text)


class Relay:
    """One call's progress, as `aeon run` shows it: lines on stderr (unless quiet) and, when the client asked for
    progress, notifications/progress in order. Lines may come from any thread (a durable run executes in DBOS's)."""

    def __init__(self, session: ServerSession, *, quiet: bool) -> None:
        self._session, self._quiet = session, quiet
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.display = ConsoleProgress(_Lines(self.status), verbose=False)

    def status(self, line: str) -> None:
        if not self._quiet:
            print(f"aeon: {terminal_safe(line)}", file=sys.stderr, flush=True)
        self._loop.call_soon_threadsafe(self._queue.put_nowait, line)

    async def pump(self) -> None:
        sent = 0
        while (line := await self._queue.get()) is not None:
            sent += 1
            await self._session.report_progress(sent, None, line)  # a no-op unless the call carried a token

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, None)


async def guarded(work: Coroutine[Any, Any, T]) -> T:
    """`work` in a task of its own. A cancelled call (the client's notifications/cancelled, or the client gone)
    cancels it once and waits, shielded, until it has ended: a run then ends as interrupted, on the record, and
    closes its resources. (The SDK cancels a handler's scope, which cancels it again at every await; the run's own
    task is cancelled exactly once, as Ctrl-C cancels `aeon run`; a durable run, executing in DBOS's thread, is
    cancelled on the record then: ServedRuns.started.)"""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with anyio.CancelScope(shield=True):
            task.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await task
        raise
