"""LogIndex: where each run's records are in a JSONL event log and its rotated files, so that one run's records are
read (as typed records of aeon.domain.audit_log) without reading the whole log again; the index follows the log."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, cast

import msgspec

from aeon.domain.audit_log import ReadRecord, as_plain, decode_record

_KEY = b'"correlation_id":'
_BLOCK = 8 * 1024 * 1024  # bytes read at a time while indexing


class LogIndex:
    """The records of every run in the log at `path` (and `path.1` … `path.<keep>`), found by correlation id.

    `records(run)` first indexes what the files gained since the last call: whole lines only (a record being written
    is indexed once it ends), by file identity, so a rotation (the live file renamed to `path.1`) keeps what was
    indexed and only the new live file is read from its start. A file cut shorter is indexed again. A line that is
    not a JSON object naming a correlation id is not a record; a kind this version does not know reads as an
    UnknownRecord. Safe to call from several threads."""

    def __init__(self, path: Path, *, keep: int = 5) -> None:
        self.path, self._keep = path, keep
        self._files: dict[tuple[int, int], int] = {}  # (device, inode) -> bytes indexed
        self._where: dict[str, list[tuple[tuple[int, int], int, int]]] = {}  # run -> (file, offset, length)
        self._lock = threading.Lock()

    def records(self, correlation_id: str) -> list[ReadRecord]:
        """Every record of run `correlation_id`, in seq order (a record written twice counts once)."""
        with self._lock:
            paths = self._refresh()
            spots = list(self._where.get(correlation_id, ()))
        found: dict[int, ReadRecord] = {}
        for file in dict.fromkeys(s[0] for s in spots):
            path = paths.get(file)
            lines = _read_at(path, [(o, n) for f, o, n in spots if f == file]) if path is not None else []
            for record in lines:
                if record.correlation_id == correlation_id and record.seq >= 0:
                    found[record.seq] = record
        return [found[seq] for seq in sorted(found)]

    def _refresh(self) -> dict[tuple[int, int], Path]:
        """Index what each file gained; return where each indexed file is now."""
        paths: dict[tuple[int, int], Path] = {}
        names = [self.path.with_name(f"{self.path.name}.{i}") for i in range(self._keep, 0, -1)] + [self.path]
        for path in names:  # oldest first, so that a run's records are listed in the order they were written
            try:
                stat = os.stat(path)
            except OSError:
                continue
            file = (stat.st_dev, stat.st_ino)
            paths[file] = path
            done = self._files.get(file, 0)
            if stat.st_size < done:  # cut shorter: what was indexed there is gone
                self._forget(file)
                done = 0
            if stat.st_size > done:
                self._files[file] = self._index(path, file, done)
        for file in [f for f in self._files if f not in paths]:  # rotated out of the kept files
            self._forget(file)
        return paths

    def _forget(self, file: tuple[int, int]) -> None:
        self._files.pop(file, None)
        for spots in self._where.values():
            spots[:] = [s for s in spots if s[0] != file]

    def _index(self, path: Path, file: tuple[int, int], offset: int) -> int:
        try:
            with path.open("rb") as f:
                f.seek(offset)
                rest = b""
                while block := f.read(_BLOCK):
                    data = rest + block
                    end = data.rfind(b"\n") + 1
                    self._index_lines(data[:end], file, offset)
                    offset += end
                    rest = data[end:]
        except OSError:
            pass
        return offset

    def _index_lines(self, data: bytes, file: tuple[int, int], offset: int) -> None:
        at = 0
        for line in data.split(b"\n"):
            run = _correlation_id(line)
            if run is not None:
                self._where.setdefault(run, []).append((file, offset + at, len(line)))
            at += len(line) + 1


def _correlation_id(line: bytes) -> str | None:
    """The correlation id a record line names, found without decoding the line (it is decoded when read)."""
    key = line.find(_KEY)
    if key < 0:
        return None
    start = line.find(b'"', key + len(_KEY))
    end = line.find(b'"', start + 1)
    if start < 0 or end < 0:
        return None
    raw = line[start : end + 1]
    try:
        value = json.loads(raw) if b"\\" not in raw else None
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _read_at(path: Path, spots: list[tuple[int, int]]) -> list[ReadRecord]:
    """The records on the lines at (offset, length) `spots` of `path` (a line that is none is left out)."""
    out = []
    try:
        with path.open("rb") as f:
            for offset, length in spots:
                f.seek(offset)
                try:
                    out.append(decode_record(f.read(length)))
                except msgspec.DecodeError:
                    continue
    except OSError:
        return out
    return out


class Logs:
    """The records of runs in any number of logs: each log indexed once (a LogIndex) and followed as it grows."""

    def __init__(self, *, keep: int = 5) -> None:
        self._keep, self._index, self._lock = keep, cast(dict[Path, LogIndex], {}), threading.Lock()

    def records(self, log: Path, run_id: str, keep: int | None = None) -> list[ReadRecord]:
        """The run's records in `log` (`keep`: how many rotated files it has, on first reading it; else the
        default given)."""
        with self._lock:
            index = self._index.setdefault(log, LogIndex(log, keep=self._keep if keep is None else keep))
        return index.records(run_id)

    def plain(self, log: Path, run_id: str) -> list[dict[str, Any]]:
        """The records as the JSON objects their lines hold."""
        return [as_plain(r) for r in self.records(log, run_id)]
