"""The web app of `aeon ui`: thin handlers — read a page's data, render it, map errors — behind the Guard."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from jinja2 import Environment
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from aeon.application.redaction import Redactor
from aeon.domain.errors import AeonError
from aeon.entrypoints.terminal import terminal_safe
from aeon.entrypoints.ui import live
from aeon.entrypoints.ui.catalog import STATUSES, RunIndex
from aeon.entrypoints.ui.decisions import Decisions
from aeon.entrypoints.ui.detail import Runs
from aeon.entrypoints.ui.guard import Guard, csrf_ok
from aeon.entrypoints.ui.pages import run_href

MAX_FORM = 2 * 1024 * 1024  # a decision's form: edited arguments are at most 1 MiB, as `aeon approve --args`


@dataclass
class Ui:
    """What the handlers share: the runs index, the run reader, the decisions, the templates, the form secret and
    the redaction every message shown passes through."""

    index: RunIndex
    runs: Runs
    decisions: Decisions
    env: Environment
    csrf: str
    redactor: Redactor

    def render(self, name: str, code: int = 200, **context: Any) -> HTMLResponse:
        for said in ("error", "message"):  # what went wrong may quote what was sent: redacted as every output
            if isinstance(context.get(said), str):
                context[said] = self.redactor.text(context[said])
        html = self.env.get_template(name).render(csrf=self.csrf, statuses=STATUSES, **context)
        return HTMLResponse(html, status_code=code, headers={"cache-control": "no-store"})


def create_app(
    ui: Ui, *, token: str | None, hosts: frozenset[str] | None, cookie: str, debug: bool = False
) -> Starlette:
    def page(handler: Callable[[Request], Response]) -> Callable[[Request], Awaitable[Response]]:
        """A page read and rendered on a worker thread (the reads block); an error is a page with one line."""

        async def endpoint(request: Request) -> Response:
            try:
                return await run_in_threadpool(handler, request)
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

    def runs_page(request: Request) -> Response:
        q = request.query_params
        status = q.get("status", "") if q.get("status", "") in STATUSES else ""
        text = q.get("q", "")[:200]
        page = ui.index.page(status=status, text=text, number=_number(q.get("page")))
        awaiting = [(s, ui.runs.pending(s.row.id)) for s in ui.index.awaiting()]
        return ui.render(
            "runs.html", page=page, status=status, text=text, awaiting=awaiting, indexed=ui.index.indexed.is_set()
        )

    def run_page(request: Request, *, error: str | None = None, args_text: str | None = None) -> Response:
        run_id = request.path_params["run_id"]
        view = ui.runs.view(run_id)
        if view is None:
            raise HTTPException(404, f"no run {run_id!r} on the record (aeon runs lists them)")
        decided = request.query_params.get("decided")
        return ui.render(
            "run.html",
            400 if error else 200,
            view=view,
            error=error,
            args_text=args_text,
            going=ui.decisions.state(run_id),
            decided=decided if decided in ("approve", "deny") else None,
        )

    def record_page(request: Request) -> Response:
        run_id, seq = request.path_params["run_id"], request.path_params["seq"]
        view = ui.runs.view(run_id)
        if view is None:
            raise HTTPException(404, f"no run {run_id!r} on the record")
        record = next((r for r in view.records if r.get("seq") == seq), None)
        if record is None:
            raise HTTPException(404, f"run {run_id} has no record {seq} in {view.log}")
        seqs = [r.get("seq") for r in view.records]
        return ui.render("record.html", view=view, record=record, seqs=seqs)

    async def decide(request: Request) -> Response:
        run_id, verdict = request.path_params["run_id"], request.path_params["verdict"]
        form = await request.form(max_part_size=MAX_FORM)
        if not csrf_ok(_field(form, "csrf"), ui.csrf):
            raise HTTPException(403, "refused: the form is not one this page made (reload the page and try again)")
        args_text = _field(form, "args")
        try:
            if verdict == "approve":
                edited = args_text if _field(form, "edit") else None
                await run_in_threadpool(ui.decisions.approve, run_id, by=_field(form, "by") or "", args_text=edited)
            elif verdict == "deny":
                reason = _field(form, "reason") or ""
                await run_in_threadpool(ui.decisions.deny, run_id, by=_field(form, "by") or "", reason=reason)
            else:
                raise HTTPException(404, f"no such decision {verdict!r}")
        except AeonError as exc:
            shown = await run_in_threadpool(run_page, request, error=str(exc), args_text=args_text)
            return shown
        return RedirectResponse(run_href(run_id) + f"?decided={verdict}", status_code=303)

    async def check(request: Request) -> Response:
        form = await request.form(max_part_size=MAX_FORM)
        if not csrf_ok(_field(form, "csrf"), ui.csrf):
            raise HTTPException(403, "refused: the form is not one this page made")
        try:
            problems = await run_in_threadpool(
                ui.decisions.check, request.path_params["run_id"], _field(form, "args") or ""
            )
        except AeonError as exc:
            problems = [str(exc)]
        return JSONResponse({"problems": problems})

    def batches_page(request: Request) -> Response:
        return ui.render("batches.html", batches=ui.index.batches())

    def batch_page(request: Request) -> Response:
        batch = ui.index.batch(request.path_params["name"])
        if batch is None:
            raise HTTPException(404, f"no batch {request.path_params['name']!r} on the record")
        return ui.render("batch.html", batch=batch)

    def failed(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return ui.render("error.html", exc.status_code, message=exc.detail)

    routes = [
        Route("/", page(runs_page)),
        Route("/runs/{run_id}", page(run_page)),
        Route("/runs/{run_id}/records/{seq:int}", page(record_page)),
        Route("/runs/{run_id}/live", live.run_feed(ui)),
        Route("/runs/{run_id}/check", check, methods=["POST"]),
        Route("/runs/{run_id}/{verdict}", decide, methods=["POST"]),
        Route("/batches", page(batches_page)),
        Route("/batches/{name}", page(batch_page)),
        Route("/batches/{name}/live", live.batch_feed(ui)),
        Mount("/static", StaticFiles(packages=[("aeon.entrypoints.ui", "static")]), name="static"),
    ]
    guard = Middleware(Guard, token=token, hosts=hosts, cookie=cookie)
    return Starlette(routes=routes, middleware=[guard], exception_handlers={HTTPException: failed})


def _number(text: str | None) -> int:
    return int(text) if text and text.isdigit() and len(text) < 7 else 1


def _field(form: Any, name: str) -> str | None:
    value = form.get(name)
    return value if isinstance(value, str) else None
