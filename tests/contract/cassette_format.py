"""Cassette plumbing for vcrpy: JSON bodies stored as YAML trees, a canonical-JSON body matcher, header filters."""

from __future__ import annotations

import copy
import difflib
import json
from collections.abc import Mapping
from typing import Any

import yaml
from vcr import VCR
from vcr.cassette import Cassette
from vcr.request import Request

BODY_MATCHER = "canonical_json_body"
# Ignored when matching, so a cassette recorded against another model (a hosted one, say) still replays in CI.
IGNORED_BODY_FIELDS = ("model",)
# Request headers that carry credentials; vcrpy drops them before anything is written.
SECRET_REQUEST_HEADERS = ("authorization", "proxy-authorization", "x-api-key", "api-key", "cookie")
# The only response headers kept: whatever else a provider sends (cookies, org ids, rate-limit state) is dropped.
KEPT_RESPONSE_HEADERS = frozenset({"content-type", "x-request-id", "request-id"})
_JSON = "json"  # the key under which a body that parses as a JSON object or array is stored, as a YAML tree


# -- matching -------------------------------------------------------------------------------------------------------


def _body_bytes(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")
    if hasattr(body, "read"):
        return bytes(body.read())
    return bytes(body)


def _parsed(body: Any) -> Any:
    raw = _body_bytes(body)
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def canonical_body(body: Any) -> Any:
    """The parsed JSON body without the ignored fields, or the raw bytes of a body that is not JSON."""
    data = _parsed(body)
    if isinstance(data, dict):
        data = {key: value for key, value in data.items() if key not in IGNORED_BODY_FIELDS}
    return data


def canonical_json_body(r1: Request, r2: Request) -> None:
    """vcrpy matcher: equal JSON bodies (key order, whitespace and the `model` field aside), else equal raw bodies."""
    b1, b2 = canonical_body(r1.body), canonical_body(r2.body)
    if b1 == b2:
        return
    if isinstance(b1, bytes) or isinstance(b2, bytes):
        raise AssertionError(f"raw bodies differ: {_body_bytes(r1.body)[:200]!r} != {_body_bytes(r2.body)[:200]!r}")
    left = json.dumps(b1, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
    right = json.dumps(b2, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
    diff = list(difflib.unified_diff(left, right, "request", "recorded", lineterm="", n=1))
    raise AssertionError("JSON bodies differ:\n" + "\n".join(diff[:30]))


# -- recording filters ----------------------------------------------------------------------------------------------


def keep_allowed_response_headers(response: dict[str, Any]) -> dict[str, Any]:
    """vcrpy before_record_response: keep only the allowlisted response headers."""
    response = copy.deepcopy(response)
    response["headers"] = {
        name: values for name, values in response["headers"].items() if name.lower() in KEPT_RESPONSE_HEADERS
    }
    return response


# -- the serializer -------------------------------------------------------------------------------------------------


def _as_tree(text: Any) -> Any:
    """A JSON object or array parsed from `text`, else None (scalars stay strings, so the mapping is reversible)."""
    if not isinstance(text, str):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict | list) else None


def _as_text(tree: Any) -> str:
    return json.dumps(tree, ensure_ascii=False)


def _trees(cassette: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(cassette)
    for interaction in data.get("interactions", []):
        request, body = interaction["request"], interaction["response"]["body"]
        tree = _as_tree(request.get("body"))
        if tree is not None:
            request["body"] = {_JSON: tree}
        tree = _as_tree(body.get("string"))
        if tree is not None:
            interaction["response"]["body"] = {_JSON: tree}
    return data


def _strings(cassette: dict[str, Any]) -> dict[str, Any]:
    for interaction in cassette.get("interactions", []):
        request, response = interaction["request"], interaction["response"]
        # A raw request body is a string, bytes or null, never a mapping: a mapping is always a stored tree.
        if isinstance(request.get("body"), dict):
            request["body"] = _as_text(request["body"][_JSON])
        if _JSON in response["body"]:
            response["body"] = {"string": _as_text(response["body"][_JSON])}
    return cassette


class _Dumper(yaml.SafeDumper):
    pass


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Prompts and answers are multi-line: a literal block reads like the text itself. PyYAML falls back to a quoted
    # scalar by itself whenever a block could not round-trip (trailing spaces, control characters).
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _comparable(cassette: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (
            interaction["request"]["method"],
            interaction["request"]["uri"],
            interaction["request"]["headers"],
            None if interaction["request"].get("body") is None else _parsed(interaction["request"]["body"]),
            interaction["response"]["status"],
            interaction["response"]["headers"],
            _parsed(interaction["response"]["body"].get("string")),
        )
        for interaction in cassette.get("interactions", [])
    ]


class JsonTreeYamlSerializer:
    """vcrpy serializer: YAML where every JSON request/response body is a readable tree under `json:`.

    Loading turns each tree back into a JSON string. Safe YAML both ways; `serialize` refuses to write a cassette
    that would not load back to the same requests and responses.
    """

    @staticmethod
    def serialize(cassette: dict[str, Any]) -> str:
        text = yaml.dump(_trees(cassette), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)
        if _comparable(JsonTreeYamlSerializer.deserialize(text)) != _comparable(cassette):
            raise ValueError("cassette not saved: it would not load back to the recorded interactions")
        return text

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        return _strings(yaml.safe_load(text))


def configure_vcr(vcr: VCR) -> None:
    """Install the serializer (as "yaml", keeping the .yaml suffix) and the body matcher on a VCR instance."""
    vcr.register_serializer("yaml", JsonTreeYamlSerializer())
    vcr.register_matcher(BODY_MATCHER, canonical_json_body)


# -- replay checks --------------------------------------------------------------------------------------------------


def unplayed(cassette: Cassette) -> list[str]:
    """`METHOD path` of every recorded interaction a replaying test did not use (empty while recording)."""
    if not cassette.write_protected:
        return []
    played: Mapping[int, int] = cassette.play_counts
    return [
        f"#{index + 1} {request.method} {request.path}"
        for index, request in enumerate(cassette.requests)
        if not played.get(index)
    ]
