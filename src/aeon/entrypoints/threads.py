"""`aeon threads`: list the threads, show one, delete one with everything it stored (application/threads.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from aeon.entrypoints.durable.options import ConfigOpt, DebugOpt, JsonOpt
from aeon.entrypoints.failures import JsonAwareCommand, reported

if TYPE_CHECKING:
    from pathlib import Path

    from aeon.application.threads import Threads

threads_app = typer.Typer(help="Threads: runs that remember (aeon run --thread NAME).", invoke_without_command=True)
NameArg = Annotated[str, typer.Argument(help="The thread's name.", metavar="NAME")]


def _threads(config: Path | None) -> Threads:
    from aeon.adapters.durable.threads import open_threads
    from aeon.entrypoints.durable.options import _settings
    from aeon.entrypoints.secrets import redactor_for

    settings = _settings(config)
    return open_threads(settings.durable, redactor_for(settings))


def _echo(text: str, *, as_json: bool) -> None:
    from aeon.domain.text import json_safe, terminal_safe

    typer.echo(json_safe(text) if as_json else terminal_safe(text), nl=as_json)


@threads_app.callback()
def listed(ctx: typer.Context, config: ConfigOpt = None, as_json: JsonOpt = False, debug: DebugOpt = False) -> None:
    """List the threads, the latest updated first: name, turns, last update."""
    if ctx.invoked_subcommand is not None:
        return
    import msgspec

    from aeon.application.views.threads import thread_lines

    with reported(as_json=as_json, debug=debug):
        found = _threads(config).list()
    text = msgspec.json.encode(found).decode() if as_json else "\n".join(thread_lines(found)) + "\n"
    _echo(text, as_json=as_json)


@threads_app.command(cls=JsonAwareCommand)
def show(name: NameArg, config: ConfigOpt = None, as_json: JsonOpt = False, debug: DebugOpt = False) -> None:
    """Show a thread: each turn's request, answer, status and run id, then its memory."""
    import msgspec

    from aeon.application.views.threads import thread_text

    with reported(as_json=as_json, debug=debug):
        thread = _threads(config).show(name)
    _echo(msgspec.json.encode(thread).decode() if as_json else thread_text(thread), as_json=as_json)


@threads_app.command(cls=JsonAwareCommand)
def delete(name: NameArg, config: ConfigOpt = None, debug: DebugOpt = False) -> None:
    """Delete a thread with everything it stored (its turns and memory); the runs stay on the record."""
    with reported(debug=debug):
        _threads(config).delete(name)
    typer.echo(f"deleted thread {name}")
