"""Live progress for a human on stderr: one line per event, so a long LLM call never looks like a hang."""

from __future__ import annotations

from typing import TextIO

from aeon.application.views.progress import progress_lines
from aeon.domain.progress import ProgressEvent
from aeon.entrypoints.render import Lines


class ConsoleProgress:
    """ProgressPort that prints one line per event, so a long LLM call never looks like a hang; without `verbose`,
    the LLM calls and supervisor actions are left out."""

    def __init__(self, stream: TextIO, *, verbose: bool = True) -> None:
        self._line = Lines(stream)
        self._verbose = verbose

    def update(self, event: ProgressEvent) -> None:
        for text, style in progress_lines(event, verbose=self._verbose):
            self._line(text, style)
