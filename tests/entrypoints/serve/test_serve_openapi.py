"""The OpenAPI document of `aeon serve`: docs/openapi.json is the one the server answers with by default (REGENERATE
says how to write it again); it documents every route of every group (runs, events, threads, schedules, A2A,
AG-UI), no more (a group of routes joins by its pair here and its line in app.DOCUMENTED), with the run options a
client may set and nothing else."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from starlette.routing import BaseRoute, Route

from aeon.application.runs.openapi import Operation
from aeon.application.runs.serving import ServeSettings
from aeon.entrypoints.serve import a2a, agui, events, runs, schedules, threads
from aeon.entrypoints.serve.app import DOCUMENTED, create_server, openapi
from aeon.entrypoints.serve.context import Served

DOC = Path(__file__).resolve().parents[3] / "docs" / "openapi.json"
REGENERATE = (
    "python -c 'import json; from aeon.application.runs.serving import ServeSettings; from aeon.entrypoints.serve.app"
    " import openapi; print(json.dumps(openapi(ServeSettings()), indent=2))' > docs/openapi.json"
)


def test_docs_openapi_json_is_the_document_the_server_gives() -> None:
    current = json.loads(json.dumps(openapi(ServeSettings())))
    assert json.loads(DOC.read_text(encoding="utf-8")) == current, f"docs/openapi.json is stale: {REGENERATE}"


GROUPS = [(group.routes, group.operations) for group in (runs, events, threads, schedules, a2a, agui)]


@pytest.mark.parametrize(("routes", "operations"), GROUPS)
def test_every_route_of_a_documented_group_is_documented_and_nothing_more(
    routes: Callable[[Served], list[BaseRoute]], operations: Callable[[ServeSettings], list[Operation]]
) -> None:
    made = routes(cast(Served, _Bare(ServeSettings())))
    found = {(m, r.path) for r in made if isinstance(r, Route) for m in (r.methods or ()) if m != "HEAD"}
    assert found == {(op.method, op.path) for op in operations(ServeSettings())}
    every = {(op.method, op.path) for group in DOCUMENTED for op in group(ServeSettings())}
    assert found <= every  # and in the document the server gives


def test_the_server_answers_with_its_document_at_openapi_json() -> None:
    app = create_server(cast(Served, _Bare(ServeSettings())), hashes=None, hosts=None)
    assert ("GET", "/openapi.json") in {
        (m, r.path) for r in app.routes if isinstance(r, Route) for m in r.methods or ()
    }


def test_a_run_request_lists_only_the_options_the_config_allows() -> None:
    schema = openapi(ServeSettings(options=("ttl",)))["components"]["schemas"]["RunRequest"]
    assert set(schema["properties"]) == {"request", "ttl"} and schema["additionalProperties"] is False


class _Bare:
    """What building the routes reads of a Served: its settings; no ui; the threads, schedules, config and run
    events only at a request (never here)."""

    def __init__(self, serve: ServeSettings) -> None:
        self.serve, self.ui = serve, None
        self.threads, self.schedules, self.config, self.events = object(), object(), None, None

    def __getattr__(self, name: str) -> Any:
        return None
