"""The pages `aeon ui` reads and renders (blocking reads, run on a worker thread by the app): the runs, one run, one
of its records, the batches and one batch."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from aeon.application.views.catalog import query
from aeon.domain.audit_log import as_plain
from aeon.entrypoints.ui.context import Ui


def runs_page(ui: Ui, request: Request) -> Response:
    q = request.query_params
    status, text, number = query(q.get("status", ""), q.get("q", ""), q.get("page"))
    page = ui.index.page(status=status, text=text, number=number)
    awaiting = [(s, ui.runs.pending(s.row.id)) for s in ui.index.awaiting()]
    return ui.render(
        "runs.html", page=page, status=status, text=text, awaiting=awaiting, indexed=ui.index.indexed.is_set()
    )


def run_page(ui: Ui, request: Request, *, error: str | None = None, args_text: str | None = None) -> Response:
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


def record_page(ui: Ui, request: Request) -> Response:
    run_id, seq = request.path_params["run_id"], request.path_params["seq"]
    view = ui.runs.view(run_id)
    if view is None:
        raise HTTPException(404, f"no run {run_id!r} on the record")
    record = next((r for r in view.records if r.seq == seq), None)
    if record is None:
        raise HTTPException(404, f"run {run_id} has no record {seq} in {view.log}")
    seqs = [r.seq for r in view.records]
    return ui.render("record.html", view=view, record=as_plain(record), seqs=seqs)


def batches_page(ui: Ui, request: Request) -> Response:
    return ui.render("batches.html", batches=ui.index.batches())


def batch_page(ui: Ui, request: Request) -> Response:
    batch = ui.index.batch(request.path_params["name"])
    if batch is None:
        raise HTTPException(404, f"no batch {request.path_params['name']!r} on the record")
    return ui.render("batch.html", batch=batch)
