"""The terminal as an adapter: whole lines coloured on a terminal and plain elsewhere (Lines), and the ProgressPort
that prints a run's live progress with them (ConsoleProgress), so a long LLM call never looks like a hang."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from aeon.application.results import RunResult
from aeon.application.views.progress import progress_lines
from aeon.application.views.result import result_lines
from aeon.application.views.tools import tool_rows
from aeon.domain.progress import ProgressEvent
from aeon.domain.text import terminal_safe
from aeon.domain.tools import ToolSpec

# What a human sees first on each line decides its colour; a pipe or NO_COLOR gets plain text (rich decides).
_STYLES = {"✓": "green", "✗": "red", "⊘": "yellow", "⚠": "yellow", "⏳": "yellow", "↻": "cyan", "⤷": "yellow"}


class Lines:
    """Writes whole lines to a stream, coloured on a terminal and plain everywhere else.

    Where rich would add no colour (a pipe or a file, no FORCE_COLOR or TTY_COMPATIBLE, no notebook) a line is
    written as rich writes it there, tabs expanded to columns of 8, and rich is not even imported: it costs a run's
    start about as much as the rest of the display. A line whose tabs sit among non-ASCII characters (rich expands
    them by terminal cells) still goes through rich.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._console: Any = _console(stream) if _may_colour(stream) else None

    def __call__(self, text: str, style: str | None = None) -> None:
        shown = terminal_safe(text)
        if self._console is None and ("\t" not in shown or shown.isascii()):
            self._stream.write(shown.expandtabs() + "\n")
            self._stream.flush()
            return
        self._console = self._console or _console(self._stream)
        self._console.print(shown, style=style or _STYLES.get(text.lstrip()[:1]))


def _may_colour(stream: TextIO) -> bool:
    """Whether rich could colour this stream (its own test, give or take: when in doubt, rich decides)."""
    if "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ or "IPython" in sys.modules:
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream: rich says no terminal too
        return False


def _console(stream: TextIO) -> Any:
    from rich.console import Console

    return Console(file=stream, highlight=False, markup=False, emoji=False, soft_wrap=True)


class ConsoleProgress:
    """ProgressPort that prints one line per event, so a long LLM call never looks like a hang; without `verbose`,
    the LLM calls and supervisor actions are left out."""

    def __init__(self, stream: TextIO, *, verbose: bool = True) -> None:
        self._line = Lines(stream)
        self._verbose = verbose

    def update(self, event: ProgressEvent) -> None:
        for text, style in progress_lines(event, verbose=self._verbose):
            self._line(text, style)


def render_tools(specs: Sequence[ToolSpec], out: TextIO) -> None:
    """`aeon tools`' table (aeon.application.views.tools), made safe for a terminal."""
    for row in tool_rows(specs):
        out.write(terminal_safe(row) + "\n")


def render_result(result: RunResult, out: TextIO) -> None:
    """The result as `aeon run` prints it: the plan's steps and outputs, the status line, the answer."""
    line = Lines(out)
    for text, style in result_lines(result):
        line(text, style)


def result_text(result: RunResult) -> str:
    """What `aeon run` prints for the result, then its error, as one text (the text beside `aeon mcp`'s result)."""
    text = io.StringIO()
    render_result(result, text)
    if result.error is not None:
        text.write(f"error {result.error.code}: {result.error.message}\n")
    return text.getvalue().strip()
