"""A tools module's top level is code Aeon does not control: run it bounded in time, away from our stdout, and
with its ways of leaving the process (sys.exit, KeyboardInterrupt) turned into ordinary errors."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class LeftEarly(Exception):
    """The code raised a BaseException that is not an Exception: it tried to end the process or the thread."""

    def __init__(self, raised: BaseException) -> None:
        if isinstance(raised, SystemExit):
            what = f"called sys.exit({raised.code!r}) (a script's argparse or main code run at import?)"
        else:
            what = f"raised {type(raised).__name__}{f': {raised}' if str(raised) else ''}"
        super().__init__(what)
        self.raised = raised


class DidNotFinish(Exception):
    """The code was still running when its time was up; its thread cannot be stopped and is left behind."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"did not finish within {seconds:g} s")
        self.seconds = seconds


def run_untrusted(fn: Callable[[], T], *, timeout: float | None, name: str) -> T:
    """`fn()` on a daemon thread, waited for at most `timeout` seconds, with sys.stdout sent to stderr meanwhile.

    Its Exceptions are raised here as they are; anything else it raises becomes LeftEarly, and running past the
    timeout DidNotFinish. Python cannot stop a thread, so one past its time keeps running until the process exits
    (a daemon thread does not hold the exit). The redirect is Python-level: a C extension writing to file
    descriptor 1 itself is not caught.
    """
    results: list[T] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(fn())
        except BaseException as exc:  # handed to the waiting side: nothing a module raises may end the process
            errors.append(exc)

    worker = threading.Thread(target=work, name=f"aeon-import-{name}", daemon=True)
    # The waiting thread prints nothing meanwhile, so the process-wide swap only catches the untrusted code's output.
    with contextlib.redirect_stdout(sys.stderr):
        worker.start()
        worker.join(timeout)
    if errors and isinstance(errors[0], Exception):
        raise errors[0]
    if errors:
        raise LeftEarly(errors[0]) from None
    if not results:
        raise DidNotFinish(timeout or 0.0)
    return results[0]
