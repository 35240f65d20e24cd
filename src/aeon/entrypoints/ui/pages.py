"""The pages' templates (Jinja2, every value escaped: autoescape on for all of them), the filters they use
(aeon.application.views.formats) and the addresses of the pages (views/addresses)."""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from aeon.application.views.addresses import batch_href, page_href, run_href
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
