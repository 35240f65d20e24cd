"""Size-based rotation of a log that several processes append to: runs.jsonl → runs.jsonl.1 … runs.jsonl.N."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path


def rotate_if_full(file: io.FileIO, path: Path, incoming: int, *, limit: int, keep: int) -> bool:
    """Make room for `incoming` bytes; True when `file` is no longer the file at `path` and must be reopened.

    The file at `path` is renamed to path.1 (older backups move up one, the one past path.`keep` is dropped) when
    it holds something and `incoming` more bytes would take it past `limit`. Writers take turns on an exclusive
    lock of that file; one that finds another has rotated it already only reopens. A record written while another
    writer rotates lands, whole, in the file just renamed (the newest backup). A file that is gone is reopened.
    """
    mine = os.fstat(file.fileno())
    if mine.st_nlink == 0:
        return True  # rotated out of the backups (or deleted) while this writer was idle: what it writes is lost
    if mine.st_size == 0 or mine.st_size + incoming <= limit:
        return False
    with _exclusive(file.fileno()):
        current = _stat(path)
        if current is not None and os.path.samestat(current, os.fstat(file.fileno())):
            _shift(path, keep)
    return True


def _shift(path: Path, keep: int) -> None:
    free = 1
    while free < keep and _stat(_backup(path, free)) is not None:
        free += 1
    for n in range(free, 1, -1):  # into the first free slot, or over the oldest kept one
        os.replace(_backup(path, n - 1), _backup(path, n))
    os.replace(path, _backup(path, 1))


def _backup(path: Path, n: int) -> Path:
    return path.with_name(f"{path.name}.{n}")


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


if sys.platform == "win32":  # no flock: rotation there assumes one writer at a time

    def _exclusive(fd: int) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

else:
    import fcntl

    @contextlib.contextmanager
    def _exclusive(fd: int) -> Iterator[None]:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
