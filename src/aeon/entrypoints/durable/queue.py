"""`aeon batch` and `aeon worker`: durable runs on a DBOS queue."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from aeon.adapters.durable.batch import Tally
    from aeon.adapters.durable.engine import DurableEngine
    from aeon.application.runs.batch import Batch
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
    from aeon.adapters.documents import read_requests
    from aeon.adapters.durable.batch_report import batch_id, queued_lines, stays
    from aeon.adapters.durable.engine import BATCH_QUEUE
    from aeon.domain.log_run import BatchStartRecord
    from aeon.entrypoints.durable.factory import process
    from aeon.entrypoints.session import ready_to_serve

    with reported(as_json=as_json, debug=debug):
        settings, requests = _settings(config), read_requests(file)
        target = out or file.with_name(file.stem + ".results.jsonl")
        name, reused, going_on = process().batch_name(settings, batch_id(file, requests), len(requests), fresh=fresh)
        with contextlib.ExitStack() as stack:
            ready_to_serve(stack, settings, name, BatchStartRecord(batch=name, runs=len(requests)))
            engine = process().batch_engine(settings, name, concurrency=concurrency, rate=rate, serve=serve)
            runs = _batch(stack.enter_context(engine), settings, config)
            stack.enter_context(stoppable(stays(name, fresh=fresh)))
            ids = runs.queue(name, requests)
            queue = f"{BATCH_QUEUE} (concurrency {concurrency})"
            for line in queued_lines(name, len(ids), queue, reused, going_on, file):
                say(line)
            tally = _followed(runs, engine, ids, target)
        say(f"{len(ids)} results in {target}")
    if as_json:
        summary = {"batch": name, "runs": len(ids), "failed": tally.failed, "reused": reused, "results": str(target)}
        typer.echo(json.dumps(summary))
    raise typer.Exit(EXIT_OK if not tally.failed else EXIT_ERROR)


def _batch(engine: DurableEngine, settings: Settings, config: Path | None) -> Batch[Tally]:
    """The batch use case on `engine`'s runs, each run recorded with the batch's config and log (made absolute)."""
    from functools import partial

    from aeon.adapters.durable.process import spec_for
    from aeon.adapters.durable.runs import DbosRuns
    from aeon.application.runs.batch import Batch

    return Batch(
        DbosRuns(engine), partial(spec_for, config=config, overrides={}, log_path=settings.log.path, plan=None)
    )


def _followed(runs: Batch[Tally], engine: DurableEngine, ids: list[str], target: Path) -> Tally:
    """The batch's runs followed until each has ended or waits for a person, their results written to `target`."""
    from aeon.adapters.durable.batch_report import watch, write_results

    tally = runs.follow(ids, lambda tally: watch(tally, sys.stderr))
    write_results(tally, target)
    if tally.awaiting:  # they wait on the record: leave without shutting the engine down (it would cancel them)
        say(f"{len(ids)} results in {target}; {len(tally.awaiting)} runs await approval")
        engine.leave()
        leave_pending(EXIT_AWAITING if not tally.failed else EXIT_ERROR)
    return tally


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
