"""Start and stop `aeon serve`: the settings, the tokens off loopback, this process's engine serving the durable
queue, what the routes share, and the server on its socket until Ctrl-C."""

from __future__ import annotations

import socket
from pathlib import Path

from aeon.adapters.durable.engine import BATCH_QUEUE, QueueLimits, redacted
from aeon.adapters.durable.listing import RunHeads
from aeon.adapters.durable.process import QueueOf
from aeon.adapters.durable.runs import DbosRuns
from aeon.adapters.durable.runtime import RUN_WORKFLOW
from aeon.adapters.durable.status import prime_decoders
from aeon.adapters.listening import listen
from aeon.application.access import is_loopback, loopback_hosts
from aeon.application.runs import RecordedRuns
from aeon.application.runs.queued import QueuedRuns
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.durable.factory import process
from aeon.entrypoints.durable.options import leave_pending
from aeon.entrypoints.failures import EXIT_OK, fail, say
from aeon.entrypoints.secrets import redactor_for
from aeon.entrypoints.serve.context import Served


def start(config: Path | None, *, host: str, port: int, name: str | None, debug: bool) -> None:
    from aeon.entrypoints.serve.app import create_server
    from aeon.entrypoints.ui.serve import run_app

    settings = load_settings(config)
    loopback = is_loopback(host)
    hashes = frozenset(t.sha256 for t in settings.serve.tokens)
    if not loopback and not hashes:
        raise fail(f"--host {host} is not loopback: every request then needs a token; make one first with "
                   "aeon serve token add NAME")  # fmt: skip
    prime_decoders()
    sock = listen(host, port)
    port = sock.getsockname()[1]
    durable = process()
    queues = {BATCH_QUEUE: QueueLimits()}
    engine = durable.engine(settings, "serve", name=name or f"{socket.gethostname()}-{port}", listen=(BATCH_QUEUE,),
                            queues=queues, lease=True)  # fmt: skip
    with engine:
        served = _served(settings, config, DbosRuns(engine), RunHeads(engine.url, RUN_WORKFLOW))
        app = create_server(served, hashes=hashes, hosts=loopback_hosts(host, port) if loopback else None)
        shown = f"[{host}]" if ":" in host else host
        say(f"serving on http://{shown}:{port}/ runs on {redacted(engine.url)} (Ctrl-C stops it)")
        run_app(app, sock)
        served.heads.close()
        say("serve stopped")
        leave_pending(EXIT_OK)  # runs under way stay pending: this server started again takes them back


def _served(settings: Settings, config: Path | None, runs: DbosRuns, heads: RunHeads) -> Served:
    queue = QueueOf(config, settings.log.path)
    redactor = redactor_for(settings)
    return Served(
        serve=settings.serve,
        queued=QueuedRuns(queue, settings.serve.options),
        runs=runs,
        recorded=RecordedRuns(runs),
        heads=heads,
        redactor=redactor,
        ui=_ui(runs, heads, redactor),
        config=config,
    )


def _ui(runs: DbosRuns, heads: RunHeads, redactor: object) -> object:
    """`aeon ui`'s pages over the same record, when Jinja2 (the [ui] extra) is installed."""
    import importlib.util

    if importlib.util.find_spec("jinja2") is None:
        return None
    from aeon.entrypoints.ui.app import create_app
    from aeon.entrypoints.ui.serve import pages

    return create_app(pages(runs.engine, heads, redactor), token=None, hosts=None, cookie="aeon_serve_ui")  # type: ignore[arg-type]
