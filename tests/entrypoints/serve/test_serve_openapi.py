"""The OpenAPI document of `aeon serve`: docs/openapi.json is the one the server answers with by default (REGENERATE
says how to write it again), and it documents every route the server has, no more, with the run options a client
may set and nothing else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from starlette.routing import Route

from aeon.application.runs.serving import ServeSettings
from aeon.entrypoints.serve.app import create_server, openapi
from aeon.entrypoints.serve.context import Served

DOC = Path(__file__).resolve().parents[3] / "docs" / "openapi.json"
REGENERATE = (
    "python -c 'import json; from aeon.application.runs.serving import ServeSettings; from aeon.entrypoints.serve.app"
    " import openapi; print(json.dumps(openapi(ServeSettings()), indent=2))' > docs/openapi.json"
)


def test_docs_openapi_json_is_the_document_the_server_gives() -> None:
    current = json.loads(json.dumps(openapi(ServeSettings())))
    assert json.loads(DOC.read_text(encoding="utf-8")) == current, f"docs/openapi.json is stale: {REGENERATE}"


def test_every_route_is_documented_and_every_documented_operation_is_a_route() -> None:
    served = cast(Served, _Bare(ServeSettings()))
    app = create_server(served, hashes=None, hosts=None)
    routes = {(m, r.path) for r in app.routes if isinstance(r, Route) for m in (r.methods or ()) if m != "HEAD"}
    documented = {(m.upper(), path) for path, ops in openapi(ServeSettings())["paths"].items() for m in ops}
    assert routes - {("GET", "/openapi.json")} == documented


def test_a_run_request_lists_only_the_options_the_config_allows() -> None:
    schema = openapi(ServeSettings(options=("ttl",)))["components"]["schemas"]["RunRequest"]
    assert set(schema["properties"]) == {"request", "ttl"} and schema["additionalProperties"] is False


class _Bare:
    """What building the routes reads of a Served: its settings; no ui."""

    def __init__(self, serve: ServeSettings) -> None:
        self.serve, self.ui = serve, None

    def __getattr__(self, name: str) -> Any:
        return None
