"""The pages' templates (Jinja2, every value escaped: autoescape on for all of them), the filters they use
(aeon.application.views.formats) and the addresses of the pages."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from aeon.application.views.formats import clip, compact, count, eta, long, money, pretty, seconds, share, when
from aeon.application.views.passes import HEIGHT, WIDTH


def environment(root: str = "") -> Environment:
    """The templates, every address in them under `root` (the path `aeon ui`'s pages are mounted at: "" alone)."""
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
    env.globals.update(
        root=root, WIDTH=WIDTH, HEIGHT=HEIGHT,
        run_href=lambda *a: root + run_href(*a), batch_href=lambda *a: root + batch_href(*a),
        page_href=lambda *a: root + page_href(*a),
    )  # fmt: skip
    return env


def run_href(run_id: str, *rest: str | int) -> str:
    """The address of a run's page (or of what follows it: a record, its live feed), the id quoted whole."""
    return "/".join(["/runs", quote(run_id, safe=""), *(quote(str(r), safe="") for r in rest)])


def batch_href(name: str, *rest: str) -> str:
    return "/".join(["/batches", quote(name, safe=""), *rest])


def page_href(status: str, text: str, number: int) -> str:
    query = {k: v for k, v in (("status", status), ("q", text), ("page", str(number))) if v and v != "1"}
    return "/" + (f"?{urlencode(query)}" if query else "")
