"""The runs API of `aeon serve`: start a run (queued), list runs, read one, cancel it, decide on the call it waits on
(the same operation as `aeon approve` / `aeon deny`)."""

from __future__ import annotations

from functools import partial

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from aeon.adapters.durable import resources
from aeon.adapters.web.bodies import body_of
from aeon.application.errors import InputError
from aeon.application.runs import openapi as api
from aeon.application.runs.recorded import decision_of
from aeon.entrypoints.serve.context import Served

MOST_PER_PAGE = 100


operations = api.runs_operations  # what the OpenAPI document shows of these routes


def routes(served: Served) -> list[BaseRoute]:
    return [
        Route("/runs", partial(_start, served), methods=["POST"]),
        Route("/runs", partial(_list, served), methods=["GET"]),
        Route("/runs/{run_id}", partial(_one, served), methods=["GET"]),
        Route("/runs/{run_id}/cancel", partial(_cancel, served), methods=["POST"]),
        Route("/runs/{run_id}/decisions", partial(_decide, served), methods=["POST"]),
    ]


async def _start(served: Served, request: Request) -> Response:
    body = await body_of(request)
    options = {k: v for k, v in body.items() if k not in ("request", "thread")}
    thread = await run_in_threadpool(served.threads.joined, body.get("thread")) if served.threads else None
    run_id = await run_in_threadpool(served.queued.submit, body.get("request"), options, thread)
    return served.json({"run_id": run_id, "status": "queued"}, 202, {"location": f"/runs/{run_id}"})


async def _list(served: Served, request: Request) -> Response:
    query = request.query_params
    limit = _number(query.get("limit", "20"), "limit", MOST_PER_PAGE)
    page, cursor = await run_in_threadpool(
        resources.page, served.runs.engine, served.heads, status=query.get("status") or None,
        after=query.get("cursor") or None, limit=limit,
    )  # fmt: skip
    return served.json({"runs": [resources.document(one) for one in page], "next": cursor})


async def _one(served: Served, request: Request) -> Response:
    return served.json(resources.document(await _read(served, request.path_params["run_id"])))


async def _cancel(served: Served, request: Request) -> Response:
    run_id = request.path_params["run_id"]
    await _read(served, run_id)
    await run_in_threadpool(served.runs.cancel, [run_id])
    return served.json(resources.document(await _read(served, run_id)), 202)


async def _decide(served: Served, request: Request) -> Response:
    """{"verdict": "approve", "args"?: {...}} or {"verdict": "deny", "reason": "..."}, "by"? who decides."""
    run_id, body = request.path_params["run_id"], await body_of(request)
    decision = decision_of(body)
    await _read(served, run_id)
    await run_in_threadpool(partial(served.recorded.answer, run_id, decision, go_on=False, edited="'args'"))
    return served.json(resources.document(await _read(served, run_id)), 202)


async def _read(served: Served, run_id: str) -> resources.Read:
    found = await run_in_threadpool(resources.read, served.runs.engine, run_id)
    if found is None:
        raise InputError(f"no run {run_id!r} on the record")
    return found


def _number(text: str, name: str, most: int) -> int:
    if not text.isdigit() or not 1 <= int(text) <= most:
        raise InputError(f"{name!r} must be a whole number from 1 to {most}")
    return int(text)
