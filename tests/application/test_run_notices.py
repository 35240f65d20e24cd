"""The end of each run a server queued is told once (application/runs/notices.py, `aeon serve`'s webhook): not
before it ended, never twice, redacted, and a delivery that failed is said."""

from __future__ import annotations

from typing import Any

from aeon.application.redaction import Redactor
from aeon.application.runs.notices import Notices


def test_each_watched_run_is_sent_once_when_it_has_ended_redacted() -> None:
    ended: dict[str, dict[str, Any]] = {}
    sent: list[tuple[dict[str, Any], str]] = []
    said: list[str] = []
    notices = Notices(ended.get, lambda doc, key: sent.append((doc, key)) or 200, Redactor(["s3cret-key"]), said.append)
    notices.watch("a")
    notices.watch("b")

    assert notices.poll() == 0 and sent == []
    ended["a"] = {"run_id": "a", "status": "completed", "answer": "uses s3cret-key"}
    assert notices.poll() == 1 and notices.poll() == 0
    assert sent == [({"event": "run.ended", "run": {"run_id": "a", "status": "completed", "answer": "uses [REDACTED]"}},
                     "a.end")] and said == []  # fmt: skip


def test_a_delivery_that_failed_is_said_and_not_sent_again() -> None:
    said: list[str] = []
    calls: list[str] = []
    notices = Notices(lambda r: {"run_id": r}, lambda doc, key: calls.append(key) or 503, Redactor(), said.append)
    notices.watch("a")

    notices.poll()
    notices.poll()
    assert calls == ["a.end"] and said == ["webhook: the end of run a was not delivered (last answer: 503)"]
