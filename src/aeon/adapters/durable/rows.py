"""`aeon runs`: a recorded durable run as it is listed, and its line of text (no DBOS needed to read either)."""

from __future__ import annotations

from typing import Any

import msgspec

from aeon.application.views.mcp import object_schema


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


def whole_run_seconds(finished: bool, created_at: int, updated_at: int, last: float | None) -> float | None:
    """Seconds from a run's start (a batch's run: from when it was queued) to its end, every execution and every
    wait for a decision included, from the system database's times (epoch milliseconds); `last`, the last
    execution's own time, while the run is unfinished or the system database has no times."""
    if finished and 0 < created_at <= updated_at:
        return (updated_at - created_at) / 1000
    return last


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


def runs_text(rows: list[RunRow]) -> str:
    """`aeon runs` as one text (the text beside `aeon mcp`'s runs)."""
    return "\n".join(run_lines(rows)) if rows else "no durable runs recorded yet"


def runs_schema() -> dict[str, Any]:
    """The JSON schema of `{"runs": [row, …]}`, what `aeon runs --json` and `aeon mcp`'s runs give."""
    return {
        "type": "object",
        "properties": {"runs": {"type": "array", "items": object_schema(RunRow)}},
        "required": ["runs"],
    }
