"""A stdio server's stderr, read as it comes and kept as its last few KiB, for the errors that name the server."""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import TextIO

KEEP_BYTES = 4096
SHOWN_CHARS = 300


class StderrTail:
    """A pipe whose write end is the server's stderr; the loop reads it as it fills and keeps its tail. So a server
    that writes a lot neither fills a disk nor blocks on a full pipe, and its last words never reach the terminal
    unasked (they are untrusted text): they are shown, clipped to one line, when the server fails."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        read_end, write_end = os.pipe()
        os.set_blocking(read_end, False)
        self._loop = loop
        self._fd: int | None = read_end
        self._tail = bytearray()
        self.writer: TextIO = os.fdopen(write_end, "w", encoding="utf-8")
        with contextlib.suppress(NotImplementedError):  # no fd readers (Windows' proactor): read when shown
            loop.add_reader(read_end, self._drain)

    def _drain(self) -> None:
        while self._fd is not None:
            try:
                chunk = os.read(self._fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:  # every write end closed: the server is gone
                self._stop_reading()
                return
            self._tail += chunk
            del self._tail[:-KEEP_BYTES]

    def tail(self) -> str:
        """The last line the server wrote on stderr (a traceback's last line says what went wrong), at most
        SHOWN_CHARS characters of it ("" if none)."""
        self._drain()
        lines = [line for line in self._tail.decode("utf-8", errors="replace").splitlines() if line.strip()]
        text = " ".join(lines[-1].split()) if lines else ""
        return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"

    def _stop_reading(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self._fd)
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        self._drain()
        self._stop_reading()
        with contextlib.suppress(OSError):
            self.writer.close()
