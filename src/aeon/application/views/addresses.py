"""The addresses of `aeon ui`'s pages: a run's (and what follows it), a batch's, a page of the runs index."""

from __future__ import annotations

from urllib.parse import quote, urlencode


def run_href(run_id: str, *rest: str | int) -> str:
    """The address of a run's page (or of what follows it: a record, its live feed), the id quoted whole."""
    return "/".join(["/runs", quote(run_id, safe=""), *(quote(str(r), safe="") for r in rest)])


def batch_href(name: str, *rest: str) -> str:
    return "/".join(["/batches", quote(name, safe=""), *rest])


def page_href(status: str, text: str, number: int) -> str:
    query = {k: v for k, v in (("status", status), ("q", text), ("page", str(number))) if v and v != "1"}
    return "/" + (f"?{urlencode(query)}" if query else "")
