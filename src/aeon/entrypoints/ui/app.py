"""The web app of `aeon ui`: the routes to thin handlers (views, forms, live feeds) behind the Guard; a page is read
on a worker thread and an error is a page of one line."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from functools import partial

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from aeon.adapters.web.guard import Guard
from aeon.domain.errors import AeonError
from aeon.domain.text import terminal_safe
from aeon.entrypoints.ui import forms, live, views
from aeon.entrypoints.ui.context import Ui

Handler = Callable[[Ui, Request], Response]


def create_app(
    ui: Ui, *, token: str | None, hosts: frozenset[str] | None, cookie: str, debug: bool = False
) -> Starlette:
    guard = Middleware(Guard, token=token, hosts=hosts, cookie=cookie)
    return Starlette(
        routes=_routes(ui, debug), middleware=[guard], exception_handlers={HTTPException: partial(_failed, ui)}
    )


def _routes(ui: Ui, debug: bool) -> list[BaseRoute]:
    def page(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        return _page(ui, handler, debug=debug)

    return [
        Route("/", page(views.runs_page)),
        Route("/runs/{run_id}", page(views.run_page)),
        Route("/runs/{run_id}/records/{seq:int}", page(views.record_page)),
        Route("/runs/{run_id}/live", live.run_feed(ui)),
        Route("/runs/{run_id}/check", partial(forms.check, ui), methods=["POST"]),
        Route("/runs/{run_id}/{verdict}", partial(forms.decide, ui), methods=["POST"]),
        Route("/batches", page(views.batches_page)),
        Route("/batches/{name}", page(views.batch_page)),
        Route("/batches/{name}/live", live.batch_feed(ui)),
        Mount("/static", StaticFiles(packages=[("aeon.entrypoints.ui", "static")]), name="static"),
    ]


def _page(ui: Ui, handler: Handler, *, debug: bool) -> Callable[[Request], Awaitable[Response]]:
    """A page read and rendered on a worker thread (the reads block); an error is a page with one line."""

    async def endpoint(request: Request) -> Response:
        try:
            return await run_in_threadpool(handler, ui, request)
        except HTTPException:
            raise
        except AeonError as exc:
            return ui.render("error.html", 400, message=str(exc))
        except Exception as exc:
            if debug:
                raise
            message = f"internal error: {type(exc).__name__}: {exc} (aeon ui --debug shows the traceback)"
            print(f"aeon: ui: {terminal_safe(message)}", file=sys.stderr, flush=True)
            return ui.render("error.html", 500, message=message)

    return endpoint


def _failed(ui: Ui, request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return ui.render("error.html", exc.status_code, message=exc.detail)
