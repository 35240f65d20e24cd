"""A throwaway Postgres for the tests and benches: the OS's own binaries (on PATH, or Debian's
/usr/lib/postgresql/<version>/bin), a cluster in a temporary folder, trust auth, 127.0.0.1 on a free port, stopped and
deleted on leaving. Postgres refuses to run as root: as root it runs as the `postgres` user, or `nobody`.

    with throwaway_postgres() as url:   # postgresql://postgres@127.0.0.1:PORT/postgres
        ...

`NoPostgres` (with the reason, naming what to install) when there are no binaries or the server does not start."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import stat
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

INSTALL = "install PostgreSQL (apt-get install postgresql) or set AEON_TEST_POSTGRES_URL"


class NoPostgres(Exception):
    """No Postgres could be started here; the message says why."""


def binaries() -> Path | None:
    """The folder holding initdb and pg_ctl: PATH first, then Debian's newest /usr/lib/postgresql/*/bin."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    return Path(versions[-1]).parent if versions else None


def _version(initdb: str) -> tuple[int, ...]:
    return tuple(int(part) for part in initdb.split("/")[-3].split(".") if part.isdigit())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _as_user() -> dict[str, Any]:
    """subprocess arguments that run Postgres as someone other than root (nothing when this is not root)."""
    if os.geteuid() != 0:
        return {}
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            user = pwd.getpwnam(name)
            return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
    raise NoPostgres("running as root, and there is neither a postgres nor a nobody user to run Postgres as")


def _reachable(tmp: Path) -> Path:
    """`tmp` when every folder above it lets others through (the user Postgres runs as must reach its data), else
    /tmp."""
    parents = [tmp.resolve(), *tmp.resolve().parents]
    return tmp if all(p.stat().st_mode & stat.S_IXOTH for p in parents) else Path("/tmp")


def _run(args: list[str], who: dict[str, Any], timeout: float = 120) -> None:
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **who)
    if done.returncode != 0:
        raise NoPostgres(f"{Path(args[0]).name} failed: {(done.stderr or done.stdout).strip()[-600:]}")


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[str]:
    """A running Postgres for the duration of the `with`; yields its URL (user postgres, database postgres)."""
    bin_dir = binaries()
    if bin_dir is None:
        raise NoPostgres(f"no Postgres binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin: {INSTALL}")
    who = _as_user()
    folder = Path(tempfile.mkdtemp(prefix="aeon-pg-", dir=_reachable(Path(tempfile.gettempdir())) if who else None))
    data = folder / "data"
    try:
        if who:
            os.chown(folder, who["user"], who["group"])
        _run([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
              "--no-sync", "--no-instructions"], who)  # fmt: skip
        port = _start(bin_dir, data, folder, who)
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                           capture_output=True, timeout=60, **who)  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _start(bin_dir: Path, data: Path, folder: Path, who: dict[str, Any]) -> int:
    """Start the server on a free port (another tried if one was taken meanwhile); returns the port."""
    # fsync off and a small footprint: the data is thrown away, and the machine is shared
    settings = f"-c listen_addresses=127.0.0.1 -c unix_socket_directories={folder} -c fsync=off " \
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=32MB"  # fmt: skip
    for _ in range(3):
        port = _free_port()
        log = folder / "server.log"
        started = subprocess.run(
            [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o", f"-p {port} {settings}",
             "start"], capture_output=True, text=True, timeout=90, **who,
        )  # fmt: skip
        if started.returncode == 0:
            return port
        said = log.read_text() if log.exists() else started.stderr
        if "could not bind" not in said and "already in use" not in said:
            raise NoPostgres(f"postgres did not start: {said.strip()[-600:]}")
    raise NoPostgres("postgres did not start: no free port found in three tries")


@contextlib.contextmanager
def fresh_database(server: str) -> Iterator[str]:
    """A database of its own on `server` (a URL ending in /DBNAME), dropped on leaving; yields its URL."""
    import psycopg

    name = f"aeon_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield server.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
