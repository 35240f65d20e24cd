"""Start and stop `aeon ui`: the checks that come before serving (a database to show, a port to listen on), the
token when the address is not loopback, the server on its socket, and what it leaves when stopped."""

from __future__ import annotations

import errno
import secrets
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aeon.adapters.durable.engine import DEFAULT_DATABASE, redacted
from aeon.adapters.durable.listing import RunHeads
from aeon.adapters.durable.runtime import RUN_WORKFLOW
from aeon.application.errors import InputError
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.durable.options import leave_pending
from aeon.entrypoints.failures import EXIT_OK
from aeon.entrypoints.terminal import terminal_safe

if TYPE_CHECKING:  # the web stack is the [ui] extra: imported when serving
    from aeon.application.redaction import Redactor
    from aeon.entrypoints.ui.context import Ui
    from aeon.entrypoints.ui.decisions import Decisions


def _say(message: str) -> None:
    print(f"aeon: {terminal_safe(message)}", file=sys.stderr, flush=True)


def database_of(settings: Settings) -> str:
    """The system database to show; InputError when there is none yet (none is made: `aeon run` makes it)."""
    configured = settings.durable.database_url
    if configured and configured.strip():
        return configured.strip()
    path = (Path.cwd() / DEFAULT_DATABASE).resolve()
    if not path.is_file():
        raise InputError(
            f"no durable runs recorded here yet: there is no system database {path} (aeon run records each run "
            "there; run aeon ui in the folder your runs ran in, or name a database with AEON_DATABASE_URL)"
        )
    from aeon.entrypoints.durable.factory import process

    return process().database(settings)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port`; InputError naming the trouble (the port in use, an address not this host's)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise InputError(
            f"--host {host!r} is not an address or name this machine can listen on ({exc.strerror})"
        ) from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InputError(
                f"port {port} on {host} is in use (another aeon ui?): choose another with --port N"
            ) from None
        if exc.errno == errno.EACCES:
            raise InputError(
                f"port {port} needs privileges to listen on: choose one above 1023 with --port N"
            ) from None
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.listen(128)
    sock.set_inheritable(False)
    return sock


def serve(config: Path | None, *, host: str, port: int, debug: bool) -> None:
    from aeon.entrypoints.config.layers import load_settings
    from aeon.entrypoints.secrets import redactor_for
    from aeon.entrypoints.ui.app import create_app
    from aeon.entrypoints.ui.guard import is_loopback, loopback_hosts

    settings = load_settings(config)
    url = database_of(settings)
    prime_decoders()
    sock = listen(host, port)
    port = sock.getsockname()[1]
    loopback = is_loopback(host)
    token = None if loopback else secrets.token_urlsafe(24)
    from aeon.entrypoints.durable.factory import process

    with process().engine(settings, "ui") as engine:
        heads = RunHeads(url, RUN_WORKFLOW)
        ui = _ui(engine, heads, redactor_for(settings))
        hosts = loopback_hosts(host, port) if loopback else None
        app = create_app(ui, token=token, hosts=hosts, cookie=f"aeon_ui_{port}", debug=debug)
        threading.Thread(target=_warm, args=(ui.index,), name="aeon-ui-index", daemon=True).start()
        _announce(host, port, url, token)
        try:
            _run(app, sock)
        finally:
            heads.close()
        _leave_going_on(engine, ui.decisions)
    _say("ui stopped")


def _ui(engine: Any, heads: RunHeads, redactor: Redactor) -> Ui:
    """What the pages read from: the runs index over `heads`, the run reader, the decisions, the templates."""
    from aeon.entrypoints.ui.catalog import RunIndex
    from aeon.entrypoints.ui.context import Ui
    from aeon.entrypoints.ui.decisions import Decisions
    from aeon.entrypoints.ui.detail import Runs
    from aeon.entrypoints.ui.pages import environment

    index = RunIndex(engine, heads, redactor)
    return Ui(index, Runs(engine, redactor), Decisions(engine), env=environment(), csrf=_secret(), redactor=redactor)


def _announce(host: str, port: int, url: str, token: str | None) -> None:
    shown = f"[{host}]" if ":" in host else host
    address = f"http://{shown}:{port}/"
    _say(f"ui on {address} showing the runs of {redacted(url)} (Ctrl-C stops it)")
    if token is not None:
        _say(f"not a loopback address: every request needs this token; open {address}?token={token} (shown once)")


def _run(app: Any, sock: socket.socket) -> None:
    """Serve `app` on `sock` until Ctrl-C or SIGTERM (uvicorn's own handlers are kept out; ours put back after)."""
    import uvicorn

    stopped: list[int] = []
    previous = {s: signal.signal(s, lambda signum, _: stopped.append(signum)) for s in _STOP}
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=2)
    )
    try:
        server.run(sockets=[sock])
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _leave_going_on(engine: Any, decisions: Decisions) -> None:
    """The runs this process took on after a decision and did not finish: shutting DBOS down would cancel them, so
    they are left pending on the record, as a crash would leave them, each with the command that finishes it."""
    left = [r for r in decisions.going_on if _still_here(engine, r)]
    if left:
        for run_id in left:
            _say(f"run {run_id} is on the record; finish it with: aeon resume {run_id}")
        leave_pending(EXIT_OK)


_STOP = (signal.SIGINT, signal.SIGTERM)


def prime_decoders() -> None:
    """Build msgspec's decoding information for every type the pages decode, here, before the server's threads
    start: msgspec builds it on a type's first decode, and two threads doing that at once crash the process."""
    import msgspec

    from aeon.adapters.durable.rows import RunRow
    from aeon.adapters.durable.runtime import Outcome, RunSpec
    from aeon.application.results import RunResult
    from aeon.domain.approval import Pending
    from aeon.domain.llm import Completion
    from aeon.domain.run_state import RunState

    for kind in (Outcome, RunSpec, RunResult, RunState, Pending, Completion, RunRow):
        msgspec.json.Decoder(kind)


def _secret() -> str:
    return secrets.token_urlsafe(32)


def _warm(index: Any) -> None:
    try:
        index.warm()
    except Exception as exc:  # the filters then read on demand; the pages still work
        _say(f"ui: reading every run for the filters failed: {type(exc).__name__}: {exc}")


def _still_here(engine: Any, run_id: str) -> bool:
    """Whether run `run_id`, taken on by this process after a decision, is still unfinished in it."""
    found = engine.client.list_workflows(workflow_ids=[run_id], load_input=False, load_output=False)
    return bool(found) and found[0].status == "PENDING" and found[0].executor_id == engine.executor_id
