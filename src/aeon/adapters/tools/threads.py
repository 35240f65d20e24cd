"""Sync tools on daemon threads: a call past its deadline is abandoned, and neither Ctrl-C nor exit waits for it."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # abandoned: the caller stopped waiting (timeout, Ctrl-C)
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


async def run_on_daemon_thread(fn: Callable[..., Any], /, **kwargs: Any) -> Any:
    """`fn(**kwargs)` on a fresh daemon thread, awaited on the event loop.

    Not `asyncio.to_thread`: its pool threads are joined at interpreter exit, so a tool that never returns would
    hold the process after the run has ended. A daemon thread is left behind instead; it finishes, or dies with us.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def work() -> None:
        result, error = None, None
        try:
            result = context.run(fn, **kwargs)
        except BaseException as exc:  # handed to the awaiting side, which decides what it means
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
            loop.call_soon_threadsafe(_settle, future, result, error)

    threading.Thread(target=work, name=f"aeon-tool-{getattr(fn, '__name__', 'call')}", daemon=True).start()
    return await future
