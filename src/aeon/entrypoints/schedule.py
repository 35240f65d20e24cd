"""`aeon schedule`: add, list, pause, resume and remove schedules (application/runs/schedules.py); `aeon worker`
processes sharing the system database run them, each tick once."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from aeon.entrypoints.durable.options import ConfigOpt, DebugOpt, JsonOpt
from aeon.entrypoints.failures import JsonAwareCommand, reported

if TYPE_CHECKING:
    from aeon.application.runs.schedules import Schedules

schedule_app = typer.Typer(help="Run a request on a cron schedule, on the durable queue.", no_args_is_help=True)
NameArg = Annotated[str, typer.Argument(help="The schedule's name.", metavar="NAME")]


@contextlib.contextmanager
def _schedules(config: Path | None) -> Iterator[Schedules]:
    from aeon.application.runs.schedules import Schedules
    from aeon.entrypoints.durable.factory import process
    from aeon.entrypoints.durable.options import _settings

    settings, durable = _settings(config), process()
    with durable.schedules(settings) as port:
        yield Schedules(port, lambda request: durable.recorded_spec(settings, config, request))


@schedule_app.command(cls=JsonAwareCommand)
def add(
    cron: Annotated[str, typer.Argument(help='When, in UTC: "0 7 * * *" (5 fields, or 6 with seconds first).')],
    request: Annotated[str, typer.Argument(help="What to run at every tick.", metavar="REQUEST")],
    name: Annotated[str | None, typer.Option("--name", help="The schedule's name (default: from the request).")] = None,
    config: ConfigOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Add a schedule: REQUEST runs with --config's settings at every tick of CRON, as a durable run taken by an
    `aeon worker` (or `aeon batch`) serving the queue; `aeon runs` lists each as schedule-NAME-TIME."""
    with reported(debug=debug), _schedules(config) as schedules:
        made = schedules.add(cron, request, name)
    typer.echo(f"schedule {made.name} added: {made.cron} (UTC), runs served by aeon worker")


@schedule_app.command("list", cls=JsonAwareCommand)
def listed(config: ConfigOpt = None, as_json: JsonOpt = False, debug: DebugOpt = False) -> None:
    """List the schedules: name, cron, active or paused, last firing, request."""
    import msgspec

    from aeon.application.views.schedules import schedule_lines
    from aeon.domain.text import json_safe, terminal_safe

    with reported(as_json=as_json, debug=debug), _schedules(config) as schedules:
        found = schedules.list()
    if as_json:
        typer.echo(json_safe(msgspec.json.encode(found).decode()))
        return
    typer.echo(terminal_safe("\n".join(schedule_lines(found))))


def _change(verb: str, name: str, config: Path | None, debug: bool) -> None:
    with reported(debug=debug), _schedules(config) as schedules:
        getattr(schedules, verb)(name)
    typer.echo(f"schedule {name} {'removed' if verb == 'remove' else verb + 'd'}")


@schedule_app.command()
def pause(name: NameArg, config: ConfigOpt = None, debug: DebugOpt = False) -> None:
    """Pause a schedule: its ticks fire no run until it is resumed."""
    _change("pause", name, config, debug)


@schedule_app.command()
def resume(name: NameArg, config: ConfigOpt = None, debug: DebugOpt = False) -> None:
    """Resume a paused schedule."""
    _change("resume", name, config, debug)


@schedule_app.command()
def remove(name: NameArg, config: ConfigOpt = None, debug: DebugOpt = False) -> None:
    """Remove a schedule (the runs it made stay on the record)."""
    _change("remove", name, config, debug)
