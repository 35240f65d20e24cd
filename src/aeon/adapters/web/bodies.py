"""JSON in and out of a web door: a request's body read as one JSON object, an answer written as redacted JSON."""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from aeon.application.approval_args import edited_args
from aeon.application.redaction import Redactor
from aeon.domain.text import json_safe


async def body_of(request: Request) -> dict[str, Any]:
    """The request's JSON object, each key once (InputError naming what is wrong, as `aeon approve --args`)."""
    return edited_args((await request.body()).decode("utf-8", "replace") or "{}", "the body") or {}


def redacted_json(redactor: Redactor, body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """`body` as JSON, redacted as every output of Aeon is, never cached."""
    encoded = json_safe(msgspec.json.encode(redactor.data(body)).decode()).encode()
    return Response(encoded, status, headers={"cache-control": "no-store", **(headers or {})},
                    media_type="application/json")  # fmt: skip
