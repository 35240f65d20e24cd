"""Keeps one llama-server running between runs and stops it once idle (README "The local server stays warm").

The local adapter runs `python -m aeon.adapters.llm._keeper STATE IDLE STARTUP -- ARGV...` (standard library only,
so it starts in milliseconds). The keeper forks: the parent waits for the child's one line (`ready` or `failed …`),
prints it and exits, so the adapter gets its answer and leaves no child behind. The child, in a session of its own,
starts the server (ARGV; its output to STATE's `.log`), waits for /health (STARTUP seconds at most) and writes STATE
(its own pid, the server's, the port) before it says `ready`. Then it watches. Every few seconds it takes STATE's
lock (the file beside STATE, also taken by every client that touches STATE before and after each call) and:
- stops the server when STATE no longer names this keeper (another took its place, or it was removed);
- stops it when STATE was last touched IDLE seconds ago or more and no slot is processing (GET /slots).
It also ends when the server exits, and on SIGTERM, SIGINT or SIGHUP; each time it stops the server (SIGTERM, then
SIGKILL after 5 s) and removes STATE if STATE still names it. On Linux the server also gets SIGTERM when the keeper
dies of anything, SIGKILL included (PR_SET_PDEATHSIG), so no server outlives its keeper.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

_STOP_GRACE = 5.0
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy


def loopback_tls() -> ssl.SSLContext:
    """The TLS context of an HTTP client of the local server: it speaks plain HTTP on loopback, so no CA bundle is
    loaded (httpx's default context reads it: about 13 ms a client)."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def lock_path(state: Path) -> Path:
    return state.with_suffix(".lock")


@contextlib.contextmanager
def locked(state: Path) -> Iterator[None]:
    """STATE's lock, held by one process at a time (the keeper deciding to stop, a client touching STATE)."""
    fd = os.open(lock_path(state), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def read_state(state: Path) -> dict[str, int] | None:
    """STATE's pids and port, None when it is absent or not what a keeper writes."""
    try:
        data = json.loads(state.read_text(encoding="utf-8"))
        return {k: int(data[k]) for k in ("keeper", "server", "port")}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def _get(url: str, key: str, timeout: float) -> bytes:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    with _OPENER.open(request, timeout=timeout) as response:
        body: bytes = response.read(1 << 20)
        return body


def _busy(port: int, key: str) -> bool:
    """Whether a slot is processing a call (then the server is not idle, however long ago STATE was touched)."""
    try:
        slots = json.loads(_get(f"http://127.0.0.1:{port}/slots", key, 2.0))
        return any(isinstance(s, dict) and s.get("is_processing") for s in slots)
    except (OSError, ValueError, TypeError):
        return False


def _wait_ready(server: subprocess.Popen[bytes], port: int, within: float) -> str | None:
    """None once /health answers 200; else why not (the server exited, or `within` seconds passed)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        code = server.poll()
        if code is not None:
            return f"exited {code}"
        with contextlib.suppress(OSError):
            _get(f"http://127.0.0.1:{port}/health", "", 2.0)
            return None
        time.sleep(0.05)
    return f"timeout {within:g}"


def watch(
    server: subprocess.Popen[bytes],
    state: Path,
    idle: float,
    *,
    busy: Callable[[], bool],
    now: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """Wait until the server should stop; why: "exited", "superseded" or "idle" (STATE is then removed)."""
    me = os.getpid()
    while True:
        sleep(min(5.0, max(idle / 4, 0.05)))
        if server.poll() is not None:
            return "exited"
        with locked(state):
            held = read_state(state)
            if held is None or held["keeper"] != me:
                return "superseded"
            try:
                quiet = now() - state.stat().st_mtime >= idle
            except OSError:
                return "superseded"
            if quiet and not busy():
                state.unlink(missing_ok=True)
                return "idle"


def _stop(server: subprocess.Popen[bytes], state: Path) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(_STOP_GRACE)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    with contextlib.suppress(OSError), locked(state):
        held = read_state(state)
        if held is not None and held["keeper"] == os.getpid():
            state.unlink(missing_ok=True)


def _write_state(state: Path, server: subprocess.Popen[bytes], port: int) -> None:
    tmp = state.with_name(f"{state.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"keeper": os.getpid(), "server": server.pid, "port": port}), encoding="utf-8")
    os.replace(tmp, state)  # whole or absent


def _die_with_keeper() -> None:
    """In the server's process before exec: on Linux, SIGTERM it when the keeper dies, even of SIGKILL."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _raise_exit(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def keep(state: Path, idle: float, startup: float, argv: list[str], report: Callable[[str], None]) -> None:
    """The child's work (see the module docstring); `report` sends the one line the parent prints."""
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _raise_exit)
    port = int(_flag(argv, "--port"))
    key = Path(_flag(argv, "--api-key-file")).read_text(encoding="utf-8").strip()
    with state.with_suffix(".log").open("wb") as log:
        server = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_keeper
        )
    try:
        problem = _wait_ready(server, port, startup)
        if problem is not None:
            report(f"failed {problem}")
            return
        _write_state(state, server, port)
        report(f"ready {server.pid}")
        watch(server, state, idle, busy=lambda: _busy(port, key))
    finally:
        _stop(server, state)


def main(args: list[str]) -> int:
    state, idle, startup, argv = Path(args[0]), float(args[1]), float(args[2]), args[4:]
    read_end, write_end = os.pipe()
    if os.fork() > 0:  # the parent: relay the child's line, then leave
        os.close(write_end)
        with os.fdopen(read_end, "rb") as answer:
            line = answer.readline().decode("utf-8", "replace").strip() or "failed the keeper ended without a word"
        print(line, flush=True)
        return 0 if line.startswith("ready") else 1
    os.close(read_end)
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # let go of the adapter's pipe: its read ends when the parent exits
        os.dup2(devnull, fd)
    with os.fdopen(write_end, "wb", buffering=0) as pipe:

        def report(line: str) -> None:
            with contextlib.suppress(OSError):
                pipe.write(line.encode() + b"\n")

        try:
            keep(state, idle, startup, argv, report)
        except BaseException as exc:  # the adapter must hear why, whatever it was
            report(f"failed {type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
