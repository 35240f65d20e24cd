"""The `aeon ui` command: its options and help; the web stack is imported only when it runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated

import typer

from aeon.entrypoints.failures import EXIT_OK, fail, reported

DEFAULT_PORT = 8765


def ui(
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="The port to serve on (0: any free port, printed).")
    ] = DEFAULT_PORT,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="The address to listen on. Any address but loopback (127.0.0.1, ::1, localhost) needs the token "
            "printed at start on every request.",
        ),
    ] = "127.0.0.1",
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="YAML config: the system database (durable.database_url) and the secrets to redact.",
            show_default=False,
        ),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")] = False,
) -> None:
    """Serve a local web view of the durable runs that aeon runs lists, until Ctrl-C.

    It shows every run, newest first (status, passes, LLM calls, tokens, cost, duration; filter by status or text),
    one run's timeline (passes, phases A-D, steps and LLM calls with durations to scale, scores per pass against the
    thresholds, how refinements changed the plan, warnings and why it ended, each linked to its JSONL record), a run
    in progress as it goes, batches with their progress, and the runs awaiting approval first: approve, edit the
    arguments (checked against the tool's schema) or deny with a reason, as aeon approve / aeon deny do.

    It reads the system database of the working folder (.aeon/aeon.sqlite) or AEON_DATABASE_URL, and each run's
    JSONL log. Everything shown is escaped and redacted like every other output. The page loads nothing from the
    internet. Decisions are POSTs checked against cross-site forgery; an approved run goes on in this process.
    Needs Jinja2: pip install 'aeon[ui]'.
    """
    with reported(debug=debug):
        if importlib.util.find_spec("jinja2") is None:  # the one dependency the [ui] extra adds
            raise fail("aeon ui needs Jinja2, which the [ui] extra installs: pip install 'aeon[ui]'")
        from aeon.entrypoints.ui.serve import serve

        serve(config, host=host, port=port, debug=debug)
    raise typer.Exit(EXIT_OK)
