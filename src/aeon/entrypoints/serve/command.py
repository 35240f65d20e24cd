"""The `aeon serve` command: its options and help; the web stack is imported only when it runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from aeon.entrypoints.durable.options import ConfigOpt, DebugOpt
from aeon.entrypoints.failures import EXIT_OK, reported, say

T = TypeVar("T")

DEFAULT_PORT = 8766

serve_app = typer.Typer(invoke_without_command=True, rich_markup_mode=None)
RunsConfigOpt = Annotated[
    Path | None, typer.Option("--config", "-c", help="YAML config of every run and of serve:.", show_default=False)
]
PortOpt = Annotated[int, typer.Option("--port", min=0, max=65535, help="The port (0: any free port, printed).")]
HostOpt = Annotated[
    str, typer.Option("--host", help="The address to listen on; any but loopback needs a token (aeon serve token).")
]
NameOpt = Annotated[
    str | None, typer.Option("--name", help="This server's stable name: started again, it takes its runs back.")
]


@serve_app.callback(invoke_without_command=True)
def serve(
    ctx: typer.Context, port: PortOpt = DEFAULT_PORT, host: HostOpt = "127.0.0.1", config: RunsConfigOpt = None,
    name: NameOpt = None, debug: DebugOpt = False,
) -> None:  # fmt: skip
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


token_app = typer.Typer(help="The bearer tokens a request to aeon serve off loopback must bear.", no_args_is_help=True)
serve_app.add_typer(token_app, name="token")
NameArg = Annotated[str, typer.Argument(help="The token's name (who or what uses it).")]


@token_app.command("add")
def token_add(name: NameArg, config: ConfigOpt = None) -> None:
    """Make a token named NAME and print it, once: only its SHA-256 is kept (in the system database)."""
    with reported():
        typer.echo(_tokens(config, lambda t: t.add(name)))


@token_app.command("revoke")
def token_revoke(name: NameArg, config: ConfigOpt = None) -> None:
    """Revoke token NAME: every server on the system database refuses it within a second."""
    with reported():
        _tokens(config, lambda t: t.revoke(name))
        say(f"token {name} revoked")


@token_app.command("list")
def token_list(config: ConfigOpt = None) -> None:
    """The tokens' names and when each was made (never the tokens)."""
    with reported():
        for name, made in _tokens(config, lambda t: t.listed()):
            typer.echo(f"{name}  made {made[:19]}")


def _tokens(config: Path | None, do: Callable[[Any], T]) -> T:
    from aeon.adapters.durable.engine import database_url
    from aeon.adapters.durable.tokens import Tokens
    from aeon.entrypoints.config.layers import load_settings

    tokens = Tokens(database_url(load_settings(config).durable.database_url, Path.cwd()))
    try:
        return do(tokens)
    finally:
        tokens.close()
