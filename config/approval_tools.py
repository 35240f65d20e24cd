"""Tools for the approval demo (config/scripted-approval.yaml): `publish` has an effect a person approves first."""

from __future__ import annotations

from pathlib import Path

from aeon.adapters.tools import tool


@tool(example={"title": "Release 1.2", "channel": "news"}, requires_approval=True)
def publish(title: str, channel: str) -> str:
    """Publish a post titled `title` on `channel` (appended to published.txt in the working folder)."""
    with Path("published.txt").open("a", encoding="utf-8") as f:
        f.write(f"{channel}: {title}\n")
    return f"published {title!r} on {channel}"
