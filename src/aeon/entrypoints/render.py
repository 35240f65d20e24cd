"""Human rendering: the final result (or its JSON document) on stdout, the tools table, and the exit codes."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import msgspec
import typer

from aeon.adapters.console import render_result
from aeon.adapters.documents import write_json
from aeon.application.redaction import Redactor
from aeon.application.results import RunResult, RunStatus
from aeon.application.views.result import result_document
from aeon.domain.text import json_safe, terminal_safe
from aeon.entrypoints.failures import (
    EXIT_AWAITING,
    EXIT_DENIED,
    EXIT_ERROR,
    EXIT_EXPIRED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_UNVERIFIED,
)
from aeon.entrypoints.secrets import redactor_for

_EXIT = {
    RunStatus.COMPLETED: EXIT_OK,
    RunStatus.TTL_EXPIRED: EXIT_EXPIRED,
    RunStatus.ERROR: EXIT_ERROR,
    RunStatus.INTERRUPTED: EXIT_INTERRUPTED,
    RunStatus.UNVERIFIED: EXIT_UNVERIFIED,
    RunStatus.AWAITING_APPROVAL: EXIT_AWAITING,
    RunStatus.APPROVAL_EXPIRED: EXIT_EXPIRED,
    RunStatus.FAILED: EXIT_ERROR,
    RunStatus.DENIED: EXIT_DENIED,
}
SIGNAL_EXIT = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: 128 + signal.SIGTERM}


def present(
    result: RunResult,
    *,
    as_json: bool,
    history: Path | None,
    received: list[int] | None = None,
    redactor: Redactor | None = None,
) -> None:
    """Write the history, print the result (or its JSON document) and exit with the status's code. The history file
    is a durable sink: fully redacted. What is printed is the caller's: redacted of the configured secrets only (what
    the run produced, a token a tool returned, is shown whole; Redactor.for_caller)."""
    redactor = redactor or redactor_for(None)
    kept = redactor.struct(result, RunResult).history
    result = redactor.for_caller().struct(result, RunResult)
    if history is not None and kept is not None:
        try:
            write_json(history, kept)
        except OSError as exc:
            typer.echo(f"aeon: warning: cannot write history to {history}: {exc.strerror or exc}", err=True)
    if as_json:
        sys.stdout.write(json_safe(msgspec.json.encode(result_document(result)).decode()) + "\n")
    else:
        render_result(result, sys.stdout)
    if result.error is not None and not as_json:
        typer.echo(f"aeon: {terminal_safe(result.error.message)}", err=True)
    if result.status is RunStatus.INTERRUPTED and received:
        raise typer.Exit(SIGNAL_EXIT.get(signal.Signals(received[0]), EXIT_INTERRUPTED))
    raise typer.Exit(_EXIT[result.status])
