"""`aeon batch`'s checks before anything is queued."""

from __future__ import annotations

from aeon.domain.log_run import BatchStartRecord
from aeon.entrypoints.container import Container, opened
from aeon.entrypoints.session import ready


async def checked(container: Container, name: str, runs: int) -> None:
    """Before any run of batch `name` is queued: the checks every front door makes (session.ready: the model can
    run, the log can be opened), and the log's first record — `batch_start`, naming the batch and its number of runs
    — written, so that a log that takes no record (a full device) stops the batch before anything is spent. A
    queued run cannot prove it: it holds its records until its first step, an LLM call, is on the record."""
    async with opened(container, container.event_log, container.llm):
        await ready(container)
        log = container.event_log()
        log.bind(name)
        log.emit(BatchStartRecord(batch=name, runs=runs))
