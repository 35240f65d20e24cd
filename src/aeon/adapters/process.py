"""The process's own ends: a stdout that a full disk or a closed pipe cannot turn into a traceback (one line on
stderr and the caller's exit code), a second signal that leaves at once, an exit that skips the interpreter's
teardown, and large imports made without the garbage collector's full passes. Standard library only: `aeon --help`
loads it (tests/entrypoints/test_cli_start.py)."""

from __future__ import annotations

import atexit
import contextlib
import errno
import gc
import io
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

_STDOUT = 1


class _Stdout(io.RawIOBase):
    """File descriptor 1 as a raw stream that keeps its first write failure instead of raising it mid-command.

    Raising would surface wherever the command happens to print (click even exits 1 silently on a broken pipe);
    keeping it lets the command finish and `guarded_stdout` report it once.
    """

    def __init__(self) -> None:
        super().__init__()
        self.failure: OSError | None = None

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return _STDOUT

    def isatty(self) -> bool:
        return os.isatty(_STDOUT)

    def write(self, data: Any) -> int:
        size = len(memoryview(data))
        if self.failure is None:
            try:
                return os.write(_STDOUT, data)
            except OSError as exc:
                self.failure = exc
        return size  # what cannot reach stdout is dropped: the failure is reported once, at the end


def guarded_stdout(command: Callable[[], object], *, failed: int) -> None:
    """Run `command` (the typer app) with such a stdout; exit with its code, or `failed` if stdout could not be
    written."""
    before = sys.stdout
    raw = _Stdout()
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=getattr(before, "encoding", None) or "utf-8",
        errors=getattr(before, "errors", None) or "strict",
        line_buffering=bool(getattr(before, "line_buffering", False)),
    )
    code: int | str | None = 0
    try:
        command()
    except SystemExit as done:
        code = done.code
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
    if raw.failure is not None and _READER_MAY_STOP and raw.failure.errno == errno.EPIPE:
        raise SystemExit(code)  # `aeon runs | head`: the reader had what it wanted
    if raw.failure is not None:
        failure = raw.failure
        print(f"aeon: cannot write to stdout: {failure.strerror or failure}", file=sys.stderr)
        raise SystemExit(failed)
    raise SystemExit(code)


def second_signal_leaves(code: int) -> None:
    """From now on a SIGINT or SIGTERM ends the process at once with `code`, quietly: the first one is being handled
    (the run left on the record, or ended as interrupted) and whoever sends another wants out now — not a traceback
    from whatever the process was doing (an exit hook stopping a model server, a thread being joined)."""

    def leave(signum: int, frame: Any) -> None:
        os._exit(code)

    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            signal.signal(signum, leave)


_READER_MAY_STOP = False


def reader_may_stop() -> None:
    """This command's output is a listing its reader may stop reading early (`aeon runs | head`): a pipe closed
    under it ends the command quietly, with its own exit code, rather than as a failed write."""
    global _READER_MAY_STOP
    _READER_MAY_STOP = True


def exit_now(code: int) -> NoReturn:
    """End the process with `code` once its output is out and its exit hooks have run (a local model's server is
    stopped, traces are flushed), without the interpreter's teardown of every module it loaded: for a process that
    imported DBOS and SQLAlchemy that teardown alone takes 0.3-0.5 s, and nothing of Aeon's waits on it (logs,
    results and recorded steps are closed and on disk by then)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: what it could not take is lost
            stream.flush()
    second_signal_leaves(code)  # the exit hooks may take a while: a Ctrl-C meanwhile ends it now
    atexit._run_exitfuncs()
    os._exit(code)


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """Meanwhile the garbage collector is off; then what was loaded is frozen (`gc.freeze`): never scanned again.

    For a command's large late imports (DBOS and SQLAlchemy for a durable `aeon run`): the objects they allocate set
    off collections that scan everything the process holds, and nothing they make is garbage. Measured on the
    scripted simple request: 267 collections taking 100-150 ms (two full ones, 70 ms), against 119 taking 18 ms."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
