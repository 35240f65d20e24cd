"""`aeon batch` and `aeon worker`: durable runs on a DBOS queue."""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    import contextlib

    from aeon.adapters.durable.batch import Tally
    from aeon.adapters.durable.runs import DbosRuns
    from aeon.entrypoints.config.schema import Settings

from aeon.entrypoints.durable.options import ConfigOpt, DebugOpt, _settings, leave_pending, stoppable
from aeon.entrypoints.failures import (
    EXIT_AWAITING,
    EXIT_ERROR,
    EXIT_OK,
    reported,
    say,
)

FileArg = Annotated[Path, typer.Argument(help='A JSONL file: one {"request": "..."} per line.')]
BatchConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="YAML config for every run.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="Most runs at once, all workers.")]
RateOpt = Annotated[float | None, typer.Option("--rate", min=0.1, help="Most runs started per minute.")]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Results, one per line (default FILE.results.jsonl).")]
ServeOpt = Annotated[
    bool, typer.Option("--serve/--no-serve", help="Run requests in this process too (else only aeon worker).")
]
FreshOpt = Annotated[
    bool, typer.Option("--fresh", help="Run every line again as new runs, though this file ran before.")
]
SummaryOpt = Annotated[bool, typer.Option("--json", help="Print a JSON summary on stdout (runs, reused, …).")]


def batch(
    file: FileArg,
    config: BatchConfigOpt = None,
    concurrency: ConcurrencyOpt = 4,
    rate: RateOpt = None,
    out: OutOpt = None,
    serve: ServeOpt = True,
    fresh: FreshOpt = False,
    as_json: SummaryOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Queue one durable run per line and wait for all; progress on stderr (done, running, failed, tokens, ETA).

    Killed and started again with the same file, it goes on where it stopped: finished runs are not run again (their
    results are reused, and it says so); --fresh runs the file again. Exit 0 when every run finished without error,
    4 otherwise (the results say which), 6 when none failed but some wait for approval (they wait on the record, for
    aeon approve / aeon deny; the others' results are written).
    """
    import contextlib

    from aeon.adapters.documents import read_requests
    from aeon.adapters.durable.batch_report import batch_id
    from aeon.adapters.durable.engine import BATCH_QUEUE
    from aeon.adapters.durable.process import spec_for
    from aeon.adapters.durable.runs import DbosRuns
    from aeon.entrypoints.durable.factory import process

    with reported(as_json=as_json, debug=debug):
        settings, durable = _settings(config), process()
        requests = read_requests(file)
        target = out or file.with_name(file.stem + ".results.jsonl")
        bid = batch_id(file, requests)
        name, reused, going_on = durable.batch_name(settings, bid, len(requests), fresh=fresh)
        with contextlib.ExitStack() as stack:
            _checked(stack, settings, name, len(requests))
            engine = durable.batch_engine(settings, name, concurrency=concurrency, rate=rate, serve=serve)
            runs = DbosRuns(stack.enter_context(engine))
            stack.enter_context(stoppable(_stays(name, fresh=fresh)))
            log = settings.log.path
            ids = runs.enqueue(name, requests, lambda r: spec_for(r, config, {}, log_path=log, plan=None))
            _say_queued(name, len(ids), f"{BATCH_QUEUE} (concurrency {concurrency})", reused, going_on, file)
            tally = _tallied(runs, ids, target)
        say(f"{len(ids)} results in {target}")
    if as_json:
        summary = {"batch": name, "runs": len(ids), "failed": tally.failed, "reused": reused, "results": str(target)}
        typer.echo(json.dumps(summary))
    raise typer.Exit(EXIT_OK if not tally.failed else EXIT_ERROR)


def _checked(stack: contextlib.ExitStack, settings: Settings, name: str, runs: int) -> None:
    """The tools load (their MCP servers start) and the model and log are checked before anything is queued or
    taken from the queue; the runs executed here use those tools (lent for as long as `stack` holds)."""
    import asyncio

    from aeon.entrypoints.container import build_container, tools_opened
    from aeon.entrypoints.durable.batch import checked
    from aeon.entrypoints.durable.factory import process

    container = build_container(settings)
    registry = stack.enter_context(tools_opened(container))
    stack.enter_context(process().composer.lent_tools(settings, registry))
    asyncio.run(checked(container, name, runs))


def _tallied(runs: DbosRuns, ids: list[str], target: Path) -> Tally:
    """Watch the batch's runs until each has ended or waits for a person, and write their results to `target`."""
    from aeon.adapters.durable.batch_report import watch, write_results
    from aeon.application.views.result import result_document

    tally = runs.tally(ids, result_document)
    watch(tally, sys.stderr)
    write_results(tally, target)
    if tally.awaiting:  # they wait on the record: leave without shutting the engine down (it would cancel them)
        say(f"{len(ids)} results in {target}; {len(tally.awaiting)} runs await approval")
        runs.engine.leave()
        leave_pending(EXIT_AWAITING if not tally.failed else EXIT_ERROR)
    return tally


def _stays(name: str, *, fresh: bool) -> str:
    again = "again without --fresh" if fresh else "the same command again"
    return f"batch {name} is on the record; start {again} to go on"


def _say_queued(name: str, count: int, queue: str, reused: int, going_on: int, file: Path) -> None:
    say(f"batch {name}: {count} runs on queue {queue}")
    if reused:
        say(
            f"batch {name}: {reused} of {count} runs already finished when this file ran before: their "
            f"results are reused, not run again (to run the file again: aeon batch {file} --fresh)"
        )
    if going_on:
        say(f"batch {name}: {going_on} runs started before go on where they stopped")


def worker(
    config: ConfigOpt = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="This worker's stable name: started again, it takes its cut-off runs back."),
    ] = None,
    debug: DebugOpt = False,
) -> None:
    """Serve the batch queue from this process (or host) until Ctrl-C or SIGTERM. It keeps a lease in the system
    database and takes over the runs of a batch or worker process unheard for durable.recover_after_seconds."""
    import socket

    from aeon.adapters.durable.engine import BATCH_QUEUE, redacted
    from aeon.entrypoints.durable.factory import process

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with reported(debug=debug):
        settings = _settings(config)
        with process().worker_engine(settings, name or socket.gethostname()) as engine:
            say(f"worker {engine.executor_id} serving {BATCH_QUEUE} on {redacted(engine.url)}")
            stop.wait()
            # runs under way stay pending: this worker started again under its name takes them back at once, any
            # other live worker once its lease has expired
            say("worker stopped")
            leave_pending(EXIT_OK)
