"""Values as a page shows them: money, durations, counts, times, JSON folded or on one line, shares, an ETA."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

FOLD = 240  # characters of a value shown before it is folded


def money(value: float | None) -> str:
    if value is None:
        return "unknown"
    return "$0" if value == 0 else f"${value:.4f}"


_NEWLINE = re.compile(r"(?<!\\)((?:\\\\)*)\\n")  # an escaped newline, not an escaped backslash before n


def seconds(value: float | None) -> str:
    if value is None:
        return "–"
    if value < 1:
        return f"{value * 1000:.0f} ms"
    if value < 120:
        return f"{value:.1f} s"
    return f"{value / 60:.1f} min"


def count(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def when(value: str | None) -> str:
    """An ISO timestamp as local-free text to the second (the record keeps the rest)."""
    if not value:
        return "–"
    try:
        return datetime.fromisoformat(value).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return value[:19]


def pretty(value: Any) -> str:
    """A value as the page shows it: text as it is, anything else as indented JSON whose texts keep their lines (a
    tool's output of many lines reads as lines, not as one line of `\\n`)."""
    if isinstance(value, str):
        return value
    return _NEWLINE.sub(lambda m: m.group(1) + "\n", json.dumps(value, indent=2, ensure_ascii=False, default=str))


def compact(value: Any) -> str:
    """A value on one line: text as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def long(value: Any) -> bool:
    """Whether a value is shown folded: long, or text of several lines (or holding such a text)."""
    text = compact(value)
    return len(text) > FOLD or "\n" in text or (not isinstance(value, str) and _NEWLINE.search(text) is not None)


def clip(value: Any, most: int = 80) -> str:
    text = " ".join(compact(value).split())
    return text if len(text) <= most else text[: most - 1] + "…"


def share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "0%"


def eta(value: float | None) -> str:
    return "?" if value is None else ("done" if value == 0 else seconds(value))
