"""What the durable commands share: their options, how they speak and load settings, and how they leave a
run on the record when stopped or waiting."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from aeon.adapters.process import exit_now, second_signal_leaves
from aeon.entrypoints.failures import (
    EXIT_AWAITING,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    fail,
    say,
)

if TYPE_CHECKING:  # the kernel, the settings schema and the container load when a command runs, not for --help
    from aeon.entrypoints.config.schema import Settings


ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="YAML config (for the system database: durable.database_url).", show_default=False
    ),
]


JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")]


HistoryOpt = Annotated[Path | None, typer.Option("--history", help="Write the execution history here.")]


RunIdArg = Annotated[str, typer.Argument(help="The id of a durable run awaiting approval (aeon runs lists them).")]


ByOpt = Annotated[
    str | None, typer.Option("--by", help="Who decides, for the record (default: your user name).", show_default=False)
]


SendOnlyOpt = Annotated[
    bool,
    typer.Option(
        "--send-only",
        help="Only record the decision: the process that holds the run, or a later aeon resume, goes on with it.",
    ),
]


def _settings(config: Path | None) -> Settings:
    from aeon.entrypoints.config.layers import load_settings

    return load_settings(config)


def _present(outcome: Any, *, as_json: bool, history: Path | None, settings: Settings) -> None:
    from aeon.entrypoints.render import present
    from aeon.entrypoints.secrets import redactor_for

    if outcome.stopped is not None:
        stop = outcome.stopped
        raise fail(stop.message, EXIT_ERROR, code=stop.code, as_json=as_json)
    present(outcome.result, as_json=as_json, history=history, redactor=redactor_for(settings))


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
        code = 128 + received[0] if received else EXIT_INTERRUPTED
        second_signal_leaves(code)
        say(f"stopped: {what_stays}")
        leave_pending(code)
    finally:
        signal.signal(signal.SIGTERM, previous)


def leave_pending(code: int) -> NoReturn:
    """Stop the process now, as a crash would, leaving the run pending on the record for `aeon resume`.

    Shutting DBOS down instead would cancel the run, and DBOS records a cancelled run started from this thread as
    failed (not resumable); ending it the kernel's way would write it off as interrupted. The exit hooks still run
    (a local model's server is stopped); the log and the recorded steps are already on disk.
    """
    exit_now(code)


def leave_waiting(show: Callable[[], None]) -> NoReturn:
    """`show` a run that waits for a decision, then leave it waiting on the record (leave_pending) with the exit code
    showing it gave (6, awaiting approval, unless it said otherwise)."""
    try:
        show()
    except typer.Exit as shown:
        leave_pending(shown.exit_code)
    leave_pending(EXIT_AWAITING)
