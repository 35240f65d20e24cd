"""The `aeon serve` command: its options and help; the web stack is imported only when it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aeon.entrypoints.failures import EXIT_OK, reported

DEFAULT_PORT = 8766

serve_app = typer.Typer(
    help="Serve Aeon's HTTP API: runs queued, listed, streamed, cancelled and decided.",
    no_args_is_help=False,
    invoke_without_command=True,
    rich_markup_mode=None,
)


@serve_app.callback(invoke_without_command=True)
def serve(
    ctx: typer.Context,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="The port to serve on (0: any free port, printed).")
    ] = DEFAULT_PORT,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="The address to listen on. Any address but loopback (127.0.0.1, ::1, localhost) needs a bearer "
            "token (aeon serve token add NAME) on every request.",
        ),
    ] = "127.0.0.1",
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="YAML config of every run, and its serve: section.", show_default=False),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="This server's stable name: started again, it takes its cut-off runs back."),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")] = False,
) -> None:
    """Serve the runs API until Ctrl-C: POST /runs queues a durable run (any aeon serve or aeon worker on the same
    system database takes it), GET /runs, /runs/{id}, /runs/{id}/events (server-sent events), POST
    /runs/{id}/cancel and /runs/{id}/decisions; the OpenAPI document at /openapi.json; aeon ui's pages at /ui/.

    A client sets only the run options serve.options allows (never tools or the model). Off loopback every request
    needs a bearer token; Host and Origin are checked; bodies and event streams are bounded; answers are redacted.
    """
    if ctx.invoked_subcommand is not None:
        return
    with reported(debug=debug):
        from aeon.entrypoints.serve.start import start

        start(config, host=host, port=port, name=name, debug=debug)
    raise typer.Exit(EXIT_OK)
