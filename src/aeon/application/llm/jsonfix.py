"""Deterministic JSON repair, no LLM call: past reasoning, prose and fences; loose syntax; a missing last brace."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from aeon.application.json_text import loads, without_lone_surrogates
from aeon.application.llm.json_spans import (
    MAX_STARTS,
    candidates,
    extract,
    first_bracket,
    looks_truncated,
    scan,
    with_final_brace,
    without_reasoning,
)
from aeon.application.llm.loose_json import python_literals, relaxed

__all__ = ["RepairOutcome", "looks_truncated", "parse_json"]

_KEY = re.compile(r"""["']([A-Za-z_][A-Za-z0-9_]*)["']\s*:""")
_GLUE = re.compile(r"""[\s,]*(?:"(?:[^"\\]|\\.)*"\s*:\s*)?""")  # `, "plan": ` between two objects

# the first characters of a JSON text as json.loads reads one (NaN, Infinity and -Infinity included)
_JSON_STARTS = frozenset('{["-0123456789tfnNI')
_ENCODED = "decoded the answer from the JSON string it was written as"
_REASONING = "dropped the reasoning block before the JSON"
_PROSE = "read the JSON object out of the text around it"
_LOOSE = "rewrote loosely written JSON (quotes, trailing commas, Python literals)"
_BRACE = "added the final '}' the answer left out"


class RepairOutcome:
    __slots__ = ("changes", "repaired", "value")

    def __init__(self, value: Any, repaired: bool, changes: Sequence[str] = ()) -> None:
        self.value = value
        self.repaired = repaired
        self.changes = list(changes)  # what the repair did, in order: for the supervisor's record


def parse_json(raw: str) -> RepairOutcome | None:
    """Parse `raw` strictly, else repair it deterministically. None when no trustworthy object comes out.

    In order: the answer as JSON (a JSON string holding an object is decoded once more); after a reasoning block;
    the one object amid prose (two objects with the same keys are two versions of the answer: None); loosely
    written JSON; an object short of its final '}' alone; then json-repair, guarded against its known traps: Python
    literals are converted before it runs (it would turn None into "None"), an empty result means it gave up, and
    every key visible in the text must survive (it may drop keys after a `//` comment).
    """
    text = raw.strip()
    if text[:1] in _JSON_STARTS:  # else prose, which json.loads refuses at its first character (at a cost)
        try:
            value = loads(text)
        except (json.JSONDecodeError, ValueError):
            pass
        else:
            inner = _decoded_string(value)
            return RepairOutcome(value, repaired=False) if inner is None else RepairOutcome(inner, True, [_ENCODED])
    body = without_reasoning(text)
    if body is None:
        return None
    changes = [_REASONING] if body != text else []
    if first_bracket(body) < 0 and "```" not in body:  # no object, array or fence: the text itself or nothing
        loose = _loose(body) if body == text else _decode(body)  # (the text itself failed strictly just now)
        return None if loose is None else RepairOutcome(without_lone_surrogates(loose[0]), True, changes + loose[1])
    try:
        found = _read(body)
    except _Ambiguous:
        return None
    if found is not None:
        value, how = found
        return RepairOutcome(without_lone_surrogates(value), repaired=True, changes=changes + how)
    if looks_truncated(body):
        closed = with_final_brace(body)
        value = _decode(closed) if closed is not None else None
        # otherwise json-repair would close it into a shorter object that looks complete
        return None if value is None else RepairOutcome(value[0], True, [*changes, _BRACE, *value[1]])
    return _guarded_repair(body, changes)


class _Ambiguous(Exception):
    """The text holds more than one answer."""


def _read(text: str) -> tuple[Any, list[str]] | None:
    """The value `text` holds without guessing: as it is, the one object amid prose, or a span loosely written."""
    whole = _decode(text)
    if whole is not None:
        return whole
    objects = _objects(text)
    # objects joined by JSON punctuation are pieces of one broken object (json-repair's), not one amid prose
    glued = any(_GLUE.fullmatch(text[a[3] : b[3] - b[2]]) for a, b in pairwise(objects))
    if objects and not glued:
        value, how, length, _ = max(objects, key=lambda o: o[2])
        if any(other is not value and set(other) & set(value) for other, *_ in objects):
            raise _Ambiguous  # two versions of the answer (keys in common): which one is meant is a guess
        return value, ([_PROSE] if length < len(text) else []) + how
    for span in candidates(text):
        found = _decode(span)
        if found is not None:
            return found[0], [_PROSE, *found[1]]
    return None


def _objects(text: str) -> list[tuple[Any, list[str], int, int]]:
    """Every object in `text` not inside another that decodes (strictly or loosely), with how, its length and where
    it ends."""
    out: list[tuple[Any, list[str], int, int]] = []
    i, tried = text.find("{"), 0
    while i >= 0 and tried < MAX_STARTS:
        tried += 1
        end = scan(text, i)[0]
        if end is None:
            break  # the objects inside one that never closes are parts of it, not the answer
        found = _decode(text[i:end])
        if found is not None and isinstance(found[0], dict):
            out.append((found[0], found[1], end - i, end))
            i = text.find("{", end)
        else:
            i = text.find("{", i + 1)
    return out


def _decode(text: str) -> tuple[Any, list[str]] | None:
    """`text` as JSON, strictly or loosely written; None when it is neither."""
    try:
        return loads(text), []
    except (json.JSONDecodeError, ValueError):
        return _loose(text)


def _loose(text: str) -> tuple[Any, list[str]] | None:
    """`text` as loosely written JSON; None when it is not."""
    strict = relaxed(text)  # single quotes, trailing commas, Python literals: decoded as JSON decodes
    if strict is None:
        return None
    try:
        return without_lone_surrogates(json.loads(strict, strict=False)), [_LOOSE]
    except (json.JSONDecodeError, ValueError):
        return None


def _decoded_string(value: Any) -> Any:
    """The object or array a JSON string value holds as JSON text; None when it holds none."""
    if not isinstance(value, str) or not value.strip().startswith(("{", "[")):
        return None
    try:
        inner = loads(value)
    except (json.JSONDecodeError, ValueError):
        return None
    return inner if isinstance(inner, dict | list) else None


def _guarded_repair(text: str, changes: list[str]) -> RepairOutcome | None:
    candidate = extract(text)
    if candidate is None:
        return None
    fixed = python_literals(candidate)
    import json_repair  # here: only an answer no cheaper fix could read needs it (and its import is not free)

    try:
        value = json_repair.loads(fixed)
    except Exception:
        return None
    if value in ("", None) or not isinstance(value, dict | list):
        return None
    if not set(_KEY.findall(candidate)) <= _all_keys(value):
        return None
    return RepairOutcome(without_lone_surrogates(value), True, [*changes, "json-repair fixed its syntax"])


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
