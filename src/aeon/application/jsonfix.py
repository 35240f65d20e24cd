"""Deterministic JSON repair: no LLM call. Strips fences and prose, fixes quotes, commas and Python literals."""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_KEY = re.compile(r"""["']([A-Za-z_][A-Za-z0-9_]*)["']\s*:""")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}


class RepairOutcome:
    __slots__ = ("repaired", "value")

    def __init__(self, value: Any, repaired: bool) -> None:
        self.value = value
        self.repaired = repaired


def parse_json(raw: str) -> RepairOutcome | None:
    """Parse `raw` strictly, else repair it deterministically. None when no trustworthy object comes out.

    json-repair is guarded against its known traps: Python literals are converted before it runs (it would turn
    None into "None"), an empty result means it gave up, and every key visible in the text must survive (it may drop
    keys after a `//` comment).
    """
    text = raw.strip()
    try:
        return RepairOutcome(json.loads(text), repaired=False)
    except (json.JSONDecodeError, ValueError):
        pass
    if looks_truncated(text):
        return None  # json-repair would close it into a shorter object that looks complete
    candidate = _extract(text)
    if candidate is None:
        return None
    try:
        return RepairOutcome(json.loads(candidate), repaired=True)
    except (json.JSONDecodeError, ValueError):
        pass
    fixed = _python_literals(candidate)
    try:
        value = json_repair.loads(fixed)
    except Exception:
        return None
    if value in ("", None) or not isinstance(value, dict | list):
        return None
    if not set(_KEY.findall(candidate)) <= _all_keys(value):
        return None
    return RepairOutcome(value, repaired=True)


def looks_truncated(raw: str) -> bool:
    """True when the JSON-looking part of `raw` never closes: the text ends inside an object, array or string.

    Quotes of either kind open strings (models write Python-style literals), `//` and `/* */` comments are skipped,
    and closing brackets are counted without matching their kind. Text after the first value closes is prose.
    """
    m = _FENCE.search(raw)
    text = m.group(1) if m else raw
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return False
    depth, quote, i, n = 0, "", min(starts), len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif text.startswith("//", i) or text.startswith("/*", i):
            end = text.find("\n" if text[i + 1] == "/" else "*/", i + 2)
            i = n if end < 0 else end
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return False
        i += 1
    return True


def _extract(text: str) -> str | None:
    """The JSON-looking part of `text`: a fenced block, else the span from the first '{' or '[' to the last."""
    m = _FENCE.search(text)
    if m:
        text = m.group(1).strip()
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    end = max(text.rfind("}"), text.rfind("]"))
    return text[start : end + 1] if end > start else text[start:]


def _python_literals(text: str) -> str:
    """Replace bare True/False/None outside string literals; strings are left untouched."""
    out: list[str] = []
    i, n, quote = 0, len(text), ""
    while i < n:
        c = text[i]
        if quote:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c in "\"'":
            quote = c
            out.append(c)
            i += 1
            continue
        if c.isalpha():
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            out.append(_PY_LITERALS.get(word, word))
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _all_keys(value: Any) -> set[str]:
    keys: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            keys.update(str(k) for k in v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return keys
