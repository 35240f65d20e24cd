"""The durable commands — `aeon runs`, `resume`, `replay`, `batch`, `worker` — and `aeon run --durable`.

DBOS is imported only when one of them runs, so the other commands start as fast as before.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import msgspec
import typer

from aeon.application.ports import ProgressPort
from aeon.application.result import RunResult
from aeon.domain.plan import Plan
from aeon.entrypoints.container import load_settings
from aeon.entrypoints.failures import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, JsonAwareCommand, fail, reported
from aeon.entrypoints.secrets import redactor_for
from aeon.entrypoints.settings import Settings

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="YAML config (for the system database: durable.database_url).", show_default=False
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")]


def _say(message: str) -> None:
    typer.echo(f"aeon: {message}", err=True)


def run_durable(
    settings: Settings,
    config: Path | None,
    overrides: dict[str, Any],
    request: str,
    plan: Plan | None,
    *,
    progress: ProgressPort | None,
) -> RunResult:
    """`aeon run --durable`: the run as a DBOS workflow in this process. A crash (or Ctrl-C, SIGTERM, SIGKILL)
    leaves it on the record, where `aeon resume RUN_ID` finishes it."""
    from aeon.entrypoints import durable_ops as ops

    encoded = msgspec.json.encode(plan).decode() if plan is not None else None
    spec = ops.spec_for(request, config, overrides, log_path=settings.log.path, plan=encoded)
    with (
        ops.engine_for(settings, "run"),
        stoppable(f"run {spec.run_id} is on the record; finish it with: aeon resume {spec.run_id}"),
    ):
        _say(f"durable run {spec.run_id} (after a crash: aeon resume {spec.run_id})")  # also with -q: it is needed
        outcome = ops.start(spec, progress)
    assert outcome.result is not None
    return outcome.result


@contextmanager
def stoppable(what_stays: str) -> Iterator[None]:
    """Ctrl-C or SIGTERM while runs execute in this process: say `what_stays` and stop as a crash would."""
    received: list[int] = []

    def stop(signum: int, _: Any) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except KeyboardInterrupt:
        _say(f"stopped: {what_stays}")
        _leave_pending(128 + received[0] if received else EXIT_INTERRUPTED)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _leave_pending(code: int) -> NoReturn:
    """Stop the process now, as a crash would, leaving the run pending on the record for `aeon resume`.

    Shutting DBOS down instead would cancel the run, and DBOS records a cancelled run started from this thread as
    failed (not resumable); ending it the kernel's way would write it off as interrupted. The exit hooks still run
    (a local model's server is stopped); the log and the recorded steps are already on disk.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(code)


def _settings(config: Path | None) -> Settings:
    return load_settings(config)


def runs(config: ConfigOpt = None, as_json: JsonOpt = False, debug: DebugOpt = False) -> None:
    """List recorded durable runs, newest first: id, request, status, passes, LLM calls, tokens, start, duration.

    Status: completed, ttl_expired, error (as aeon run); stopped (a non-idempotent tool call was cut off: aeon resume
    ID --rerun-unsafe); pending (running now, or cut off by a crash or Ctrl-C: aeon resume ID); queued (a batch run
    not started yet); failed or cancelled (DBOS could not finish it).
    """
    with reported(as_json=as_json, debug=debug):
        from aeon.entrypoints import durable_ops as ops

        settings = _settings(config)
        with ops.engine_for(settings, "runs") as engine:
            rows = [redactor_for(settings).struct(row, ops.RunRow) for row in ops.list_runs(engine)]
    if as_json:
        typer.echo(msgspec.json.encode(rows).decode())
        return
    if not rows:
        typer.echo("no durable runs recorded yet (aeon run --durable …)")
        return
    for r in rows:
        took = f"{r.duration:.1f}s" if r.duration is not None else "-"
        origin = f" (replay of {r.replay_of})" if r.replay_of else ""
        typer.echo(
            f"{r.id}  {r.status:<11} {r.passes} passes · {r.calls} calls · {r.tokens} tokens · "
            f"started {r.started[:19]} · {took}  {r.request[:60]!r}{origin}"
        )


def resume(
    run_id: Annotated[str, typer.Argument(help="The id of an interrupted durable run (aeon runs lists them).")],
    config: ConfigOpt = None,
    rerun_unsafe: Annotated[
        bool,
        typer.Option("--rerun-unsafe", help="Run again a non-idempotent tool call that a crash cut off."),
    ] = False,
    as_json: JsonOpt = False,
    history: Annotated[Path | None, typer.Option("--history", help="Write the execution history here.")] = None,
    debug: DebugOpt = False,
) -> None:
    """Finish an interrupted durable run: recorded LLM and tool calls are not made again; the log goes on.

    Exit codes as for aeon run; 4 with a structured error when a non-idempotent tool call was in flight.
    """
    with reported(as_json=as_json, debug=debug):
        from aeon.entrypoints import durable_ops as ops

        stays = f"run {run_id} is on the record; finish it with: aeon resume {run_id}"
        settings = _settings(config)
        with ops.engine_for(settings, "resume") as engine, stoppable(stays):
            outcome = ops.resume(engine, run_id, rerun_unsafe=rerun_unsafe)
    _present(outcome, as_json=as_json, history=history, settings=settings)


def _present(outcome: Any, *, as_json: bool, history: Path | None, settings: Settings) -> None:
    from aeon.entrypoints.cli import present

    if outcome.stopped is not None:
        stop = outcome.stopped
        raise fail(stop.message, EXIT_ERROR, code=stop.code, as_json=as_json)
    present(outcome.result, as_json=as_json, history=history, redactor=redactor_for(settings))


def replay(
    run_id: Annotated[str, typer.Argument(help="The durable run to fork.")],
    from_pass: Annotated[int, typer.Option("--from-pass", help="The pass to go on from (1 = from the start).")],
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", "-c", help="The config from that pass on (default: the run's own).", show_default=False
        ),
    ] = None,
    as_json: JsonOpt = False,
    history: Annotated[Path | None, typer.Option("--history", help="Write the execution history here.")] = None,
    debug: DebugOpt = False,
) -> None:
    """Fork a durable run at the start of pass N: the passes before are taken from its record (no call made again),
    and from pass N on the model and config of --config answer. Both runs stay listed by aeon runs."""
    with reported(as_json=as_json, debug=debug):
        from aeon.entrypoints import durable_ops as ops

        settings = _settings(config)
        with ops.engine_for(settings, "replay") as engine, stoppable("the replay is on the record (aeon runs)"):
            outcome = ops.replay(engine, run_id, from_pass, config)
            assert outcome.result is not None
            _say(f"replay of {run_id} from pass {from_pass}: run {outcome.result.correlation_id}")
    _present(outcome, as_json=as_json, history=history, settings=settings)


def batch(
    file: Annotated[Path, typer.Argument(help='A JSONL file: one {"request": "..."} per line.')],
    config: Annotated[Path | None, typer.Option("--config", "-c", help="YAML config for every run.")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Most runs at once, all workers.")] = 4,
    rate: Annotated[float | None, typer.Option("--rate", min=0.1, help="Most runs started per minute.")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Results, one per line (default FILE.results.jsonl).")
    ] = None,
    serve: Annotated[
        bool, typer.Option("--serve/--no-serve", help="Run requests in this process too (else only aeon worker).")
    ] = True,
    debug: DebugOpt = False,
) -> None:
    """Queue one durable run per line and wait for all; progress on stderr (done, running, failed, tokens, ETA).

    Killed and started again with the same file, it goes on where it stopped: finished runs are not run again.
    Exit 0 when every run finished without error, 4 otherwise (the results say which).
    """
    from aeon.adapters.durable.engine import BATCH_QUEUE, QueueLimits
    from aeon.entrypoints import durable_batch as b
    from aeon.entrypoints import durable_ops as ops

    with reported(debug=debug):
        settings = load_settings(config)
        requests = b.read_requests(file)
        bid = b.batch_id(file, requests)
        target = out or file.with_name(file.stem + ".results.jsonl")
        listen = (BATCH_QUEUE,) if serve else ("aeon-none",)
        limits = {BATCH_QUEUE: QueueLimits(concurrency=concurrency, per_minute=rate)}
        stays = f"batch {bid} is on the record; start the same command again to go on"
        with ops.engine_for(settings, "batch", name=bid, listen=listen, queues=limits) as engine, stoppable(stays):
            ids = b.enqueue(bid, requests, lambda r: ops.spec_for(r, config, {}, log_path=settings.log.path, plan=None))
            _say(f"batch {bid}: {len(ids)} runs on queue {BATCH_QUEUE} (concurrency {concurrency})")
            tally = b.Tally(engine, ids)
            b.watch(tally, sys.stderr)
            b.write_results(tally, target)
        _say(f"{len(ids)} results in {target}")
    raise typer.Exit(EXIT_OK if not tally.failed else EXIT_ERROR)


def worker(
    config: ConfigOpt = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="This worker's stable name: started again, it finishes its own cut-off runs."),
    ] = None,
    debug: DebugOpt = False,
) -> None:
    """Serve the batch queue from this process (or host) until Ctrl-C or SIGTERM."""
    import socket

    from aeon.adapters.durable.engine import BATCH_QUEUE, QueueLimits, redacted
    from aeon.entrypoints import durable_ops as ops

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with reported(debug=debug):
        settings = _settings(config)
        serving = {BATCH_QUEUE: QueueLimits()}
        host = name or socket.gethostname()
        with ops.engine_for(settings, "worker", name=host, listen=(BATCH_QUEUE,), queues=serving) as engine:
            _say(f"worker {engine.executor_id} serving {BATCH_QUEUE} on {redacted(engine.url)}")
            stop.wait()
            # runs under way stay pending: this worker, started again under its name, finishes them
            _say("worker stopped")
            _leave_pending(EXIT_OK)


def register_durable_commands(app: typer.Typer) -> None:
    app.command(cls=JsonAwareCommand)(runs)
    app.command(cls=JsonAwareCommand)(resume)
    app.command(cls=JsonAwareCommand)(replay)
    app.command()(batch)
    app.command()(worker)
