"""`aeon runs`: a recorded durable run as it is listed, and its line of text (no DBOS needed to read either)."""

from __future__ import annotations

import msgspec


class RunRow(msgspec.Struct, kw_only=True):
    """One line of `aeon runs`."""

    id: str
    request: str
    status: str
    passes: int
    calls: int
    tokens: int
    started: str
    duration: float | None
    replay_of: str | None = None
    why: str | None = None  # a denied run: which step a person denied, by whom and why


def run_lines(rows: list[RunRow]) -> list[str]:
    """`aeon runs` as text: one line per run."""
    lines = []
    for r in rows:
        took = f"{r.duration:.1f}s" if r.duration is not None else "-"
        origin = f" (replay of {r.replay_of})" if r.replay_of else ""
        origin += f" — {r.why}" if r.why else ""
        lines.append(
            f"{r.id}  {r.status:<11} {r.passes} passes · {r.calls} calls · {r.tokens} tokens · "
            f"started {r.started[:19]} · {took}  {r.request[:60]!r}{origin}"
        )
    return lines
