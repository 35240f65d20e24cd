"""An MCP `tools/call` result as a tool's output: structured content when given, else its content blocks recorded
as they came — text whole, images, audio and blobs by type, size and sha256, never their bytes."""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from typing import Any

# A result bigger than this (as JSON) is refused, not cut: a cut result would pass for a whole one.
MAX_RESULT_BYTES = 4 * 1024 * 1024
MAX_ERROR_TEXT = 2000


class MalformedResult(ValueError):
    """A result the server should not have sent (undecodable data, too big); the message says what is wrong."""


def tool_output(result: Mapping[str, Any]) -> Any:
    """The output of a successful call: its `structuredContent` when it has one (checked against the tool's
    outputSchema, when it declared one); else its one text block as the text; else the list of its content blocks,
    each a record with a "type" (see `block_record`). Raises MalformedResult."""
    structured = result.get("structuredContent")
    if structured is not None:
        return structured
    blocks = [block_record(block) for block in result.get("content") or []]
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return blocks[0]["text"]
    return blocks


def error_text(result: Mapping[str, Any]) -> str:
    """What a result with `isError` says, in one line: its text blocks (clipped), or the kinds of what it sent."""
    blocks = [block_record(block) for block in result.get("content") or []]
    texts = [b["text"] for b in blocks if b["type"] == "text" and b["text"].strip()]
    said = " ".join(" ".join(texts).split()) if texts else ", ".join(b["type"] for b in blocks) or "no message"
    return said if len(said) <= MAX_ERROR_TEXT else said[: MAX_ERROR_TEXT - 1] + "…"


def block_record(block: Mapping[str, Any]) -> dict[str, Any]:
    """One content block as recorded: text as it is; image and audio as mime_type, bytes and sha256; an embedded
    resource with its uri and mime type, and its text or (a blob) bytes and sha256; a resource link as its uri,
    name and mime type; a block of a kind this version does not know as its type alone."""
    kind = str(block.get("type"))
    if kind == "text":
        return {"type": kind, "text": str(block.get("text", ""))}
    if kind in ("image", "audio"):
        return {"type": kind, "mime_type": block.get("mimeType"), **_digest(block.get("data"), kind)}
    if kind == "resource":
        resource = block.get("resource") or {}
        record = {"type": kind, "uri": resource.get("uri"), "mime_type": resource.get("mimeType")}
        if "blob" in resource:
            return record | _digest(resource.get("blob"), "resource blob")
        return record | {"text": str(resource.get("text", ""))}
    if kind == "resource_link":
        return {"type": kind, "uri": block.get("uri"), "name": block.get("name"), "mime_type": block.get("mimeType")}
    return {"type": kind}


def _digest(data: Any, what: str) -> dict[str, Any]:
    if not isinstance(data, str):
        raise MalformedResult(f"its {what} block has no base64 data")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise MalformedResult(f"its {what} block's data is not base64") from None
    return {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
