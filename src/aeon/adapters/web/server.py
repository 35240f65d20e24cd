"""A web door's app served by uvicorn on a socket already bound, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import signal
import socket
from typing import Any

_STOP = (signal.SIGINT, signal.SIGTERM)


def run_app(app: Any, sock: socket.socket) -> None:
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


def address(host: str, port: int) -> str:
    """The address a person opens for `host`:`port` (an IPv6 host in brackets)."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"
