"""Deterministic JSON repair: no LLM call. Strips fences and prose, fixes quotes, commas and Python literals."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_KEY = re.compile(r"""["']([A-Za-z_][A-Za-z0-9_]*)["']\s*:""")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_JSON_WORDS = frozenset({"true", "false", "null", "NaN", "Infinity"})


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
        return RepairOutcome(loads(text), repaired=False)
    except (json.JSONDecodeError, ValueError):
        pass
    for span in _candidates(text):
        strict = _relaxed(span)  # single quotes, trailing commas, Python literals: decoded as JSON decodes
        if strict is not None:
            try:
                return RepairOutcome(without_lone_surrogates(json.loads(strict, strict=False)), repaired=True)
            except (json.JSONDecodeError, ValueError):
                pass
    if looks_truncated(text):
        return None  # json-repair would close it into a shorter object that looks complete
    candidate = _extract(text)
    if candidate is None:
        return None
    fixed = _python_literals(candidate)
    import json_repair  # here: only an answer no cheaper fix could read needs it (and its import is not free)

    try:
        value = json_repair.loads(fixed)
    except Exception:
        return None
    if value in ("", None) or not isinstance(value, dict | list):
        return None
    if not set(_KEY.findall(candidate)) <= _all_keys(value):
        return None
    return RepairOutcome(without_lone_surrogates(value), repaired=True)


def _candidates(text: str) -> list[str]:
    """Where the JSON may be: the span from the first '{' or '[' to the last '}' or ']' (a fence inside a string
    value stays inside it), then a fenced block."""
    out = []
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    end = max(text.rfind("}"), text.rfind("]"))
    if starts and end > min(starts):
        out.append(text[min(starts) : end + 1])
    if (m := _FENCE.search(text)) is not None:
        out.append(m.group(1).strip())
    return out


def _relaxed(text: str) -> str | None:
    """`text` as strict JSON when it is JSON written loosely (as models and Python write it): strings in single
    quotes, trailing commas, True/False/None (a comment is left to the guarded repair: a key in it may be meant).
    Escapes keep their JSON meaning (`\\n` is a newline, `\\ud83d\\ude00` one emoji).
    None when something else is wrong, for the general repair to try."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            string = _string(text, i)
            if string is None:
                return None
            out.append(string[0])
            i = string[1]
        elif c == ",":
            k = i + 1
            while k < n and text[k] in " \t\r\n":
                k += 1
            if k < n and text[k] in "}]":
                i = k
                continue
            out.append(c)
            i += 1
        elif c.isdigit() or c == "-":
            j = i + 1
            while j < n and (text[j].isdigit() or text[j] in ".eE+-"):
                j += 1
            out.append(text[i:j])
            i = j
        elif c.isalpha():
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            if word not in _PY_LITERALS and word not in _JSON_WORDS:
                return None  # a bare word: not loosely written JSON
            out.append(_PY_LITERALS.get(word, word))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _string(text: str, start: int) -> tuple[str, int] | None:
    """The string literal opening at `start` (either quote) as a JSON string, and where the text goes on."""
    quote, j, n, buf = text[start], start + 1, len(text), []
    while j < n and text[j] != quote:
        if text[j] == "\\" and j + 1 < n:
            nxt = text[j + 1]
            buf.append(nxt if nxt == "'" else ('\\"' if nxt == '"' else text[j : j + 2]))
            j += 2
            continue
        buf.append('\\"' if text[j] == '"' else text[j])
        j += 1
    if j >= n:
        return None
    return '"' + "".join(buf).replace("\n", "\\n").replace("\t", "\\t") + '"', j + 1


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
