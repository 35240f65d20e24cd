"""The end of each run a server queued, told once (`aeon serve`'s webhook): `Notices.watch` a run when queued,
`poll()` sends each watched run that ended to `send`, once, and forgets it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from aeon.application.redaction import Redactor


class Notices:
    """`ended(run_id)`: the run's document once it ended (None: not yet); `send(document, delivery)`: the status of
    the delivery's last answer (2xx: delivered; it retries within itself); `say` is told of a delivery that failed."""

    def __init__(
        self,
        ended: Callable[[str], dict[str, Any] | None],
        send: Callable[[dict[str, Any], str], int],
        redactor: Redactor,
        say: Callable[[str], None],
    ) -> None:
        self._ended, self._send, self._redactor, self._say = ended, send, redactor, say
        self._watched: list[str] = []
        self._lock = threading.Lock()

    def keep_polling(self, wait: Callable[[float], object], every: float = 0.5) -> None:
        """`poll()` every `every` seconds until `wait(every)` says to stop (returns true) — a server's thread."""
        while True:
            try:
                self.poll()
            except Exception as exc:  # the database was away a moment: the next look tries again
                self._say(f"webhook: {type(exc).__name__}: {exc}")
            if wait(every):
                return

    def watch(self, run_id: str) -> None:
        with self._lock:
            self._watched.append(run_id)

    def poll(self) -> int:
        """Send every watched run that has ended; how many were sent."""
        with self._lock:
            watched = list(self._watched)
        sent = 0
        for run_id in watched:
            document = self._ended(run_id)
            if document is None:
                continue
            with self._lock:
                self._watched.remove(run_id)
            status = self._send(self._redactor.data({"event": "run.ended", "run": document}), f"{run_id}.end")
            if not 200 <= status < 300:
                self._say(f"webhook: the end of run {run_id} was not delivered (last answer: {status or 'none'})")
            sent += 1
        return sent
