"""`aeon batch`'s input and its checks before anything is queued."""

from __future__ import annotations

from pathlib import Path

from aeon.adapters.documents import MAX_BATCH_BYTES, parse_json, read_text
from aeon.application.errors import InputError
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


def read_requests(path: Path) -> list[str]:
    """The requests of a JSONL file: each line `{"request": "..."}` or a JSON string; blank lines are skipped.
    Raises InputError naming the file and line of the first bad one."""
    lines = read_text(path, what="batch file", max_bytes=MAX_BATCH_BYTES).splitlines()
    requests = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        item = parse_json(line, source=str(path), first_line=number)
        request = item.get("request") if isinstance(item, dict) else item
        if not isinstance(request, str) or not request.strip():
            raise InputError(f'{path}:{number}: expected {{"request": "..."}} with a non-empty request')
        requests.append(request)
    if not requests:
        raise InputError(f"{path} holds no requests")
    return requests
