"""The forms `aeon ui` takes: a decision on a tool call waiting for approval, and the check of edited arguments
before one is sent. Each needs the page's form secret."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from aeon.application.access import same as csrf_ok
from aeon.application.views.addresses import run_href
from aeon.domain.errors import AeonError
from aeon.entrypoints.ui.context import Ui
from aeon.entrypoints.ui.views import run_page

MAX_FORM = 2 * 1024 * 1024  # a decision's form: edited arguments are at most 1 MiB, as `aeon approve --args`


async def decide(ui: Ui, request: Request) -> Response:
    """Approve (the arguments as asked, or edited) or deny (with a reason); then the run's page, which follows it."""
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
        shown: Response = await run_in_threadpool(run_page, ui, request, error=str(exc), args_text=args_text)
        return shown
    root = request.scope.get("root_path", "")  # mounted under `aeon serve`: /ui
    return RedirectResponse(root + run_href(run_id) + f"?decided={verdict}", status_code=303)


async def check(ui: Ui, request: Request) -> Response:
    """The problems edited arguments have against the tool's schema (none: they may be sent)."""
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


def _field(form: Any, name: str) -> str | None:
    value = form.get(name)
    return value if isinstance(value, str) else None
