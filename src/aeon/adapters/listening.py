"""A socket for a server of Aeon to listen on (`aeon ui`), with the trouble worded for the person who chose it."""

from __future__ import annotations

import errno
import socket

from aeon.application.errors import InputError


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
