"""Start and stop `aeon ui`: the checks that come before serving (a database to show, a port to listen on), the
token when the address is not loopback, the server on its socket, and what it leaves when stopped."""

from __future__ import annotations

import functools
import json
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aeon.adapters.durable.engine import recorded_database, redacted
from aeon.adapters.durable.listing import RunHeads
from aeon.adapters.durable.runs import DbosRuns
from aeon.adapters.durable.runtime import RUN_WORKFLOW
from aeon.adapters.durable.status import prime_decoders
from aeon.adapters.listening import listen
from aeon.adapters.web.server import address, run_app
from aeon.domain.errors import AeonError
from aeon.entrypoints.durable.options import leave_pending
from aeon.entrypoints.failures import EXIT_OK, say

if TYPE_CHECKING:  # the web stack is the [ui] extra: imported when serving
    from aeon.adapters.durable.run_pages import Recorded
    from aeon.adapters.durable.runtime import RunSpec
    from aeon.application.redaction import Redactor
    from aeon.application.runs.decisions import Decisions
    from aeon.entrypoints.ui.context import Ui


def serve(config: Path | None, *, host: str, port: int, debug: bool) -> None:
    from aeon.application.access import is_loopback, loopback_hosts
    from aeon.entrypoints.config.layers import load_settings
    from aeon.entrypoints.secrets import redactor_for
    from aeon.entrypoints.ui.app import create_app

    settings = load_settings(config)
    url = recorded_database(settings.durable.database_url, Path.cwd())
    prime_decoders()
    sock = listen(host, port)
    port = sock.getsockname()[1]
    loopback = is_loopback(host)
    token = None if loopback else secrets.token_urlsafe(24)
    from aeon.entrypoints.durable.factory import process

    with process().engine(settings, "ui") as engine:
        heads = RunHeads(url, RUN_WORKFLOW)
        ui = pages(engine, heads, redactor_for(settings))
        hosts = loopback_hosts(host, port) if loopback else None
        app = create_app(ui, token=token, hosts=hosts, cookie=f"aeon_ui_{port}", debug=debug)
        threading.Thread(target=_warm, args=(ui.index,), name="aeon-ui-index", daemon=True).start()
        _announce(host, port, url, token)
        try:
            run_app(app, sock)
        finally:
            heads.close()
        _leave_going_on(engine, ui.decisions)
    say("ui stopped")


def pages(engine: Any, heads: RunHeads, redactor: Redactor, root: str = "") -> Ui:
    """What the pages read from: the runs index over `heads`, the run reader, the decisions, the templates."""
    from aeon.adapters.durable.catalog import RunIndex
    from aeon.adapters.durable.run_pages import RunPages
    from aeon.adapters.eventlog.reader import Logs
    from aeon.application.runs.decisions import Decisions
    from aeon.entrypoints.ui.context import Ui
    from aeon.entrypoints.ui.pages import environment

    index, runs = RunIndex(engine, heads, redactor), RunPages(engine, redactor, Logs().records, _recorded_settings())
    return Ui(index, runs, Decisions(DbosRuns(engine)), env=environment(root), csrf=_secret(), redactor=redactor)


def _recorded_settings() -> Callable[[RunSpec], Recorded | None]:
    """What a run's page needs of the settings it was recorded with (its config file and overrides), each loaded
    once; None when they cannot be loaded any more (the file moved): the page then shows what the record holds."""
    from aeon.adapters.durable.run_pages import Recorded
    from aeon.entrypoints.config.layers import load_settings

    @functools.cache
    def loaded(config: str | None, overrides: str) -> Recorded | None:
        try:
            s = load_settings(Path(config) if config else None, json.loads(overrides))
        except AeonError:
            return None
        return Recorded(s.log.path, s.log.keep, s.convergence.model_dump(mode="json"))

    return lambda spec: loaded(spec.config, json.dumps(spec.overrides, sort_keys=True))


def _announce(host: str, port: int, url: str, token: str | None) -> None:
    shown = address(host, port)
    say(f"ui on {shown} showing the runs of {redacted(url)} (Ctrl-C stops it)")
    if token is not None:
        say(f"not a loopback address: every request needs this token; open {shown}?token={token} (shown once)")


def _leave_going_on(engine: Any, decisions: Decisions) -> None:
    """The runs this process took on after a decision and did not finish: shutting DBOS down would cancel them, so
    they are left pending on the record, as a crash would leave them, each with the command that finishes it."""
    left = [r for r in decisions.going_on if DbosRuns(engine).held_here(r)]
    if left:
        for run_id in left:
            say(f"run {run_id} is on the record; finish it with: aeon resume {run_id}")
        leave_pending(EXIT_OK)


def _secret() -> str:
    return secrets.token_urlsafe(32)


def _warm(index: Any) -> None:
    try:
        index.warm()
    except Exception as exc:  # the filters then read on demand; the pages still work
        say(f"ui: reading every run for the filters failed: {type(exc).__name__}: {exc}")
