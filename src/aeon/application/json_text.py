"""Strict JSON reading for every room: json.loads, with no lone surrogate left in what it reads (JSON repair, which
only the LLM services need, is llm/jsonfix.py)."""

from __future__ import annotations

import json
import re
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def loads(text: str | bytes) -> Any:
    """json.loads, with every lone surrogate as U+FFFD. The value is walked only when the text could make one: a
    `\\ud8..` escape, or a raw surrogate in a str (UTF-8 bytes cannot hold one)."""
    value = json.loads(text)
    if isinstance(text, bytes):
        suspect = _SURROGATE_ESCAPE_BYTES.search(text) is not None
    else:
        suspect = _SURROGATE_ESCAPE.search(text) is not None or _LONE_SURROGATE.search(text) is not None
    return without_lone_surrogates(value) if suspect else value


def without_lone_surrogates(value: Any) -> Any:
    """`value` (a JSON tree) with every lone surrogate — what JSON's `\\ud83d` escape decodes to without its pair —
    as U+FFFD: no log line, output or UTF-8 text can hold one."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value) if _LONE_SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_lone_surrogates(v) for v in value]
    return value
