"""The durable commands — `aeon runs`, `resume`, `replay`, `batch`, `worker` — and a durable `aeon run` (the default).

DBOS is imported only when one of them runs, so the other commands start as fast as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from aeon.adapters.process import reader_may_stop
from aeon.domain.text import json_safe
from aeon.entrypoints.durable.decide import approve, deny
from aeon.entrypoints.durable.options import (
    ConfigOpt,
    DebugOpt,
    HistoryOpt,
    JsonOpt,
    _settings,
)
from aeon.entrypoints.durable.queue import batch, worker
from aeon.entrypoints.durable.waiting import on_record
from aeon.entrypoints.failures import (
    JsonAwareCommand,
    reported,
    say,
)

if TYPE_CHECKING:
    from aeon.adapters.durable.runtime import Outcome
    from aeon.application.runs import RecordedRuns


def runs(config: ConfigOpt = None, as_json: JsonOpt = False, debug: DebugOpt = False) -> None:
    """List recorded durable runs, newest first: id, request, status, passes, LLM calls, tokens, start, duration.

    Status: completed, ttl_expired, error, denied (as aeon run); stopped (a non-idempotent tool call was cut off:
    aeon resume ID --rerun-unsafe, or --mark-done --output JSON); running (its process is alive: its pid on this
    host, or a batch's or worker's heartbeat); interrupted (cut off by a crash or Ctrl-C, its process gone: aeon
    resume ID); pending (unfinished, its process on another host: running, or cut off); awaiting_approval (a tool
    call waits for a person: aeon approve ID / aeon deny ID --reason TEXT); queued (a batch run not started yet);
    failed or cancelled (DBOS could not finish it).
    """
    reader_may_stop()
    with reported(as_json=as_json, debug=debug):
        from aeon.adapters.durable.rows import RunRow, run_lines
        from aeon.entrypoints.durable.factory import process
        from aeon.entrypoints.secrets import redactor_for

        settings = _settings(config)
        with process().runs(settings, "runs") as recorded:
            rows = [redactor_for(settings).struct(row, RunRow) for row in recorded.list()]
    if as_json:
        typer.echo(json_safe(msgspec.json.encode(rows).decode()))
        return
    if not rows:
        typer.echo("no durable runs recorded yet (aeon run records each run unless --no-durable)")
        return
    for line in run_lines(rows):
        typer.echo(line)


def resume(
    run_id: Annotated[str, typer.Argument(help="The id of an interrupted durable run (aeon runs lists them).")],
    config: ConfigOpt = None,
    rerun_unsafe: Annotated[
        bool,
        typer.Option("--rerun-unsafe", help="Run again a non-idempotent tool call that a crash cut off."),
    ] = False,
    mark_done: Annotated[
        bool,
        typer.Option(
            "--mark-done", help="The cut-off call did have its effect: take --output as its result, never run it."
        ),
    ] = False,
    output: Annotated[
        str | None, typer.Option("--output", help="With --mark-done: what the tool returned, as JSON.")
    ] = None,
    output_file: Annotated[
        Path | None, typer.Option("--output-file", help="With --mark-done: a file holding that JSON.")
    ] = None,
    as_json: JsonOpt = False,
    history: HistoryOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Finish an interrupted durable run: recorded LLM and tool calls are not made again; the log goes on.

    Exit codes as for aeon run; 4 with a structured error when a non-idempotent tool call was in flight: check its
    effect, then --rerun-unsafe (it did not happen) or --mark-done --output JSON (it did; recorded as operator-given).
    """
    from aeon.adapters.durable.given import operator_output

    with reported(as_json=as_json, debug=debug):
        given = operator_output(mark_done, output, output_file, rerun_unsafe=rerun_unsafe)

    def resumed(runs: RecordedRuns[Outcome]) -> Outcome:
        return runs.resume(run_id, rerun_unsafe=rerun_unsafe, given=given)

    on_record(run_id, resumed, config=config, kind="resume", as_json=as_json, history=history, debug=debug)


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
    history: HistoryOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Fork a durable run at the start of pass N: the passes before are taken from its record (no call made again),
    and from pass N on the model and config of --config answer. Both runs stay listed by aeon runs."""

    def forked(runs: RecordedRuns[Outcome]) -> Outcome:
        outcome = runs.fork(run_id, from_pass, config=str(config) if config else None)
        assert outcome.result is not None
        say(f"replay of {run_id} from pass {from_pass}: run {outcome.result.correlation_id}")
        return outcome

    stays = "the replay is on the record (aeon runs)"
    on_record(run_id, forked, config=config, kind="replay", as_json=as_json, history=history, debug=debug, stays=stays)


def register_durable_commands(app: typer.Typer) -> None:
    app.command(cls=JsonAwareCommand)(runs)
    app.command(cls=JsonAwareCommand)(resume)
    app.command(cls=JsonAwareCommand)(replay)
    app.command(cls=JsonAwareCommand)(approve)
    app.command(cls=JsonAwareCommand)(deny)
    app.command()(batch)
    app.command()(worker)
