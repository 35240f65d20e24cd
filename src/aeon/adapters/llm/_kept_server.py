"""The local server kept warm between runs: find the one running for this configuration, or start it under a keeper.

With `llm.keep_alive` > 0 (300 s by default, as Ollama keeps a model loaded for five minutes) the local adapter does
not start a llama-server of its own for each run. Servers live in one private folder (`servers_dir`), one per
command line (binary, model, flags, threads: `name`): `<name>.json` names the keeper, the server and its port,
`<name>.key` holds the server's API key (a random one per server, mode 0600: another user of the machine cannot send
it calls), `<name>.log` its output, `<name>.jinja` its chat template. `acquire`, under `<name>.lock`:
- a live server (its keeper's pid alive, /health 200): touch `<name>.json` and use it (a few milliseconds);
- none: start one under `adapters/llm/_keeper.py` on a free loopback port, which answers once /health is 200.
Every call touches `<name>.json` before it is sent and when it is answered (`Kept.touch`, under the lock); the
keeper stops the server once nothing touched it for `keep_alive` seconds and no slot is processing. A server that
went away meanwhile (stopped idle, killed) makes `touch` answer False, and the adapter acquires again.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from aeon.adapters.llm._keeper import lock_path, locked, loopback_tls, read_state
from aeon.adapters.llm._llama_server import free_loopback_port, log_tail
from aeon.application.errors import LLMUnavailable

_LOCK_POLL = 0.05


@dataclass(frozen=True)
class Kept:
    """A kept server in use: where it listens, its key, and the state file that shows it is used."""

    state: Path
    keeper: int
    pid: int
    port: int
    key: str

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def touch(self) -> bool:
        """Mark the server used now, so its keeper waits `keep_alive` seconds more; False when it is gone."""
        try:
            with locked(self.state):
                held = read_state(self.state)
                if held != {"keeper": self.keeper, "server": self.pid, "port": self.port}:
                    return False
                os.utime(self.state)
                return True
        except OSError:
            return False


def name(argv: list[str]) -> str:
    """The file name of a server's command line (without port and key file): one kept server per configuration."""
    return hashlib.sha256(json.dumps(argv).encode()).hexdigest()[:16]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process under a reused pid
        return False
    return True


async def _lock(state: Path, within: float) -> int:
    """Take `state`'s lock without blocking the event loop (a process starting the server holds it for seconds)."""
    fd = os.open(lock_path(state), os.O_RDWR | os.O_CREAT, 0o600)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if loop.time() >= deadline:
                os.close(fd)
                raise LLMUnavailable(f"another process held {lock_path(state)} for {within:g} s") from None
            await asyncio.sleep(_LOCK_POLL)
        except BaseException:
            os.close(fd)
            raise


async def _running(state: Path) -> Kept | None:
    held = read_state(state)
    if held is None or not _alive(held["keeper"]):
        return None
    try:
        key = state.with_suffix(".key").read_text(encoding="utf-8").strip()
        headers = {"authorization": f"Bearer {key}"}  # 200 from this server only: not another on a reused port
        async with httpx.AsyncClient(timeout=2.0, trust_env=False, verify=loopback_tls(), headers=headers) as client:
            healthy = (await client.get(f"http://127.0.0.1:{held['port']}/slots")).status_code == 200
    except (OSError, httpx.HTTPError):
        return None
    if not healthy:
        return None
    os.utime(state)
    return Kept(state, held["keeper"], held["server"], held["port"], key)


def _write_key(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secrets.token_urlsafe(24) + "\n")


async def _start(state: Path, argv: list[str], port: int, idle: float, startup: float) -> Kept:
    key_file = state.with_suffix(".key")
    command = [sys.executable, "-m", "aeon.adapters.llm._keeper", str(state), repr(idle), repr(startup), "--"]
    keeper = _spawn([*command, *argv, "--port", str(port), "--api-key-file", str(key_file)], key_file)
    try:
        out, _ = await asyncio.to_thread(keeper.communicate, timeout=startup + 10)
    except BaseException:  # a timeout, or the run cancelled: the keeper's child gives up on its own at `startup`
        keeper.kill()
        await asyncio.to_thread(keeper.wait)
        raise
    line = out.decode("utf-8", "replace").strip()
    if not line.startswith("ready"):
        raise LLMUnavailable(_failure(line, state))
    held = read_state(state)
    if held is None:
        raise LLMUnavailable(f"the local model's keeper said ready but wrote no {state}")
    return Kept(state, held["keeper"], held["server"], held["port"], key_file.read_text(encoding="utf-8").strip())


def _spawn(command: list[str], key_file: Path) -> subprocess.Popen[bytes]:
    """The keeper, with a new API key in `key_file` for the server it starts."""
    try:
        _write_key(key_file)
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError as exc:
        raise LLMUnavailable(f"could not start the local model's keeper: {exc.strerror or exc}") from exc


def _failure(line: str, state: Path) -> str:
    what = line.removeprefix("failed ").strip() or "no answer"
    if what.startswith("exited "):
        what = f"llama-server exited with code {what.removeprefix('exited ')} before it was ready"
    elif what.startswith("timeout "):
        what = f"llama-server was not ready within {what.removeprefix('timeout ')} s"
    return f"{what}: {log_tail(state.with_suffix('.log'))}"


async def acquire(
    folder: Path, argv: list[str], *, idle: float, startup: float, announce: Callable[[], None] = lambda: None
) -> tuple[Kept, bool]:
    """The kept server for `argv` (started on a free loopback port, `announce` called first, if none runs) and
    whether it was already running."""
    try:
        state = await asyncio.to_thread(_state_file, folder, argv)
        fd = await _lock(state, startup + 15)
        try:
            running = await _running(state)
            if running is not None:
                return running, True
            announce()
            return await _start(state, argv, free_loopback_port(), idle, startup), False
        finally:
            os.close(fd)
    except OSError as exc:  # a folder that cannot be written, a file system without flock
        raise _unusable(folder, exc) from exc


def _unusable(folder: Path, exc: OSError) -> LLMUnavailable:
    reason = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
    return LLMUnavailable(
        f"the local server could not be kept in {folder} ({reason}); set llm.keep_alive: 0 "
        "(AEON_LOCAL_KEEP_ALIVE=0) for a server per run"
    )


def template_file(folder: Path, text: str) -> Path:
    """The chat template the kept servers read, written into `folder` when it is not there with this text yet."""
    path = folder / f"template-{hashlib.sha256(text.encode()).hexdigest()[:12]}.jinja"
    if not path.is_file():
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            raise _unusable(folder, exc) from exc
    return path


def _state_file(folder: Path, argv: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder / f"{name(argv)}.json"


def stop_all(folder: Path) -> list[int]:
    """SIGTERM every keeper named in `folder` (each stops its server); the pids signalled."""
    stopped = []
    for state in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        held = read_state(state)
        if held is not None and _alive(held["keeper"]):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(held["keeper"], signal.SIGTERM)
                stopped.append(held["keeper"])
    return stopped
