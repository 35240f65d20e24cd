"""The pages' templates (Jinja2, every value escaped: autoescape on for all of them) and the filters they use."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from aeon.application.views.passes import HEIGHT, WIDTH

FOLD = 240  # characters of a value shown before it is folded


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("aeon.entrypoints.ui", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        money=money,
        seconds=seconds,
        count=count,
        when=when,
        pretty=pretty,
        clip=clip,
        long=long,
        compact=compact,
        share=share,
        eta=eta,
    )
    env.globals.update(run_href=run_href, batch_href=batch_href, page_href=page_href, WIDTH=WIDTH, HEIGHT=HEIGHT)
    return env


def run_href(run_id: str, *rest: str | int) -> str:
    """The address of a run's page (or of what follows it: a record, its live feed), the id quoted whole."""
    return "/".join(["/runs", quote(run_id, safe=""), *(quote(str(r), safe="") for r in rest)])


def batch_href(name: str, *rest: str) -> str:
    return "/".join(["/batches", quote(name, safe=""), *rest])


def page_href(status: str, text: str, number: int) -> str:
    query = {k: v for k, v in (("status", status), ("q", text), ("page", str(number))) if v and v != "1"}
    return "/" + (f"?{urlencode(query)}" if query else "")


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
