"""Start and stop `aeon serve`: the settings, the tokens off loopback, this process's engine serving the durable
queue, what the routes share, and the server on its socket until Ctrl-C."""

from __future__ import annotations

import contextlib
import socket
import threading
from functools import partial
from pathlib import Path

from aeon.adapters.durable import resources
from aeon.adapters.durable.engine import BATCH_QUEUE, QueueLimits, redacted
from aeon.adapters.durable.listing import RunHeads
from aeon.adapters.durable.process import QueueOf
from aeon.adapters.durable.runs import DbosRuns
from aeon.adapters.durable.runtime import RUN_WORKFLOW
from aeon.adapters.durable.schedules import DbosSchedules
from aeon.adapters.durable.status import prime_decoders
from aeon.adapters.durable.threads import store_for
from aeon.adapters.durable.tokens import Live, Tokens
from aeon.adapters.eventlog.reader import Logs
from aeon.adapters.listening import listen
from aeon.adapters.web.server import address, run_app
from aeon.adapters.webhooks.sender import WebhookSender
from aeon.application.access import is_loopback, loopback_hosts
from aeon.application.redaction import Redactor
from aeon.application.runs import RecordedRuns
from aeon.application.runs.notices import Notices
from aeon.application.runs.queued import QueuedRuns
from aeon.application.runs.schedules import Schedules
from aeon.application.runs.serving import WebhookSettings
from aeon.application.threads import Threads
from aeon.application.views.run_resource import RunEvents
from aeon.domain.log_run import ServeStartRecord
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.durable.factory import process
from aeon.entrypoints.durable.options import leave_pending
from aeon.entrypoints.failures import EXIT_OK, fail, say
from aeon.entrypoints.secrets import redactor_for
from aeon.entrypoints.serve.context import Served
from aeon.entrypoints.session import ready_to_serve


def start(config: Path | None, *, host: str, port: int, name: str | None, debug: bool) -> None:
    from aeon.entrypoints.serve.app import create_server

    settings, durable = load_settings(config), process()
    loopback = is_loopback(host)
    hashes = None if loopback else _hashes(settings, durable.database(settings))
    if hashes is not None and not len(hashes):
        raise fail(f"--host {host} is not loopback: every request then needs a token; make one first with "
                   "aeon serve token add NAME")  # fmt: skip
    prime_decoders()
    sock = listen(host, port)
    port = sock.getsockname()[1]
    queues = {BATCH_QUEUE: QueueLimits()}
    engine = durable.engine(settings, "serve", name=name or f"{socket.gethostname()}-{port}", listen=(BATCH_QUEUE,),
                            queues=queues, lease=True)  # fmt: skip
    with contextlib.ExitStack() as stack:
        first = ServeStartRecord(server=engine.executor_id, address=f"{host}:{port}")
        ready_to_serve(stack, settings, first.server, first)
        stack.enter_context(engine)
        served = _served(settings, config, DbosRuns(engine), RunHeads(engine.url, RUN_WORKFLOW))
        app = create_server(served, hashes=hashes, hosts=loopback_hosts(host, port) if loopback else None)
        say(f"serving on {address(host, port)} runs on {redacted(engine.url)} (Ctrl-C stops it)")
        run_app(app, sock)
        served.heads.close()
        say("serve stopped")
        leave_pending(EXIT_OK)  # runs under way stay pending: this server started again takes them back


def _hashes(settings: Settings, url: str) -> Live:
    """The hashes of the tokens a request off loopback must bear one of: the config's, and the system database's."""
    return Live((t.sha256 for t in settings.serve.tokens), Tokens(url).hashes)


def _served(settings: Settings, config: Path | None, runs: DbosRuns, heads: RunHeads) -> Served:
    queue, durable = QueueOf(config, settings.log.path), process()
    redactor = redactor_for(settings)
    notices = _notices(settings.serve.webhook, runs, redactor)
    return Served(
        serve=settings.serve,
        queued=QueuedRuns(queue, settings.serve.options, queued=notices.watch if notices else lambda _: None),
        runs=runs,
        recorded=RecordedRuns(runs),
        heads=heads,
        redactor=redactor,
        events=RunEvents(partial(resources.watched, runs.engine), Logs(keep=settings.log.keep).plain, redactor),
        ui=_ui(runs, heads, redactor),
        threads=Threads(store_for(runs.engine.url), redactor),
        schedules=Schedules(DbosSchedules(runs.engine.client), partial(durable.recorded_spec, settings, config)),
        config=config,
    )


def _notices(hook: WebhookSettings | None, runs: DbosRuns, redactor: Redactor) -> Notices | None:
    """The webhook told of each queued run's end, by a thread that looks twice a second (None: no webhook)."""
    if hook is None:
        return None
    sender = WebhookSender(hook.url, hook.secret.get_secret_value(), attempts=hook.attempts, timeout=hook.timeout,
                           max_body=hook.max_body)  # fmt: skip
    notices = Notices(partial(resources.ended, runs.engine), sender.send, redactor, say)
    forever = threading.Event()
    threading.Thread(target=notices.keep_polling, args=(forever.wait,), name="aeon-serve-webhook", daemon=True).start()
    return notices


def _ui(runs: DbosRuns, heads: RunHeads, redactor: object) -> object:
    """`aeon ui`'s pages over the same record, when Jinja2 (the [ui] extra) is installed."""
    import importlib.util

    if importlib.util.find_spec("jinja2") is None:
        return None
    from aeon.entrypoints.ui.app import create_app
    from aeon.entrypoints.ui.serve import pages

    return create_app(pages(runs.engine, heads, redactor, "/ui"), token=None, hosts=None, cookie="aeon_serve_ui")  # type: ignore[arg-type]
