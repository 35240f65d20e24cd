"""Untrusted JSON/YAML files read with bounds: a size cap, a nesting limit, no YAML aliases, no duplicate keys.

Every plan, config layer (the built-in base too), LLM script, history and batch file Aeon reads comes through here,
so a ten-line file cannot grow to gigabytes and a deep one cannot end in a RecursionError: what is refused is an
InputError naming the file, the line and the limit, decided before anything large is built.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import yaml

from aeon.adapters.safe_yaml import MAX_DEPTH, YamlRefused, load_yaml
from aeon.application.errors import InputError
from aeon.domain.text import json_safe

__all__ = [
    "MAX_BATCH_BYTES",
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_HISTORY_BYTES",
    "MAX_HISTORY_DEPTH",
    "MAX_HISTORY_VALUES",
    "MAX_SCRIPT_BYTES",
    "parse_json",
    "parse_yaml",
    "read_document",
    "read_text",
]

MAX_DOCUMENT_BYTES = 1 << 20  # plans, configs, LLM scripts: far above any hand-written one
MAX_HISTORY_BYTES = 64 << 20  # `aeon run --history` files hold every pass's plan and outputs
MAX_BATCH_BYTES = 16 << 20  # `aeon batch` files: one request per line
MAX_SCRIPT_BYTES = 16 << 20  # LLM scripts: every answer of a scripted run, test data more than input
MAX_HISTORY_DEPTH = 400  # a history wraps the plan's args and the tools' outputs a few levels deeper
# A parsed JSON value costs 30-70 bytes however short its text ("[]," is 3 bytes, a list is 64): a 64 MiB file of
# them would need gigabytes, so the values are counted (an upper bound, from the text) before anything is built.
# A real 50 MiB history holds about 6.6 million by this count.
MAX_HISTORY_VALUES = 8_000_000

# A JSON string token (escapes included) or a bracket: enough to follow nesting and keys outside strings.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]')
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")
# Python's refusal to read an int of more digits than sys.get_int_max_str_digits() (4,300 by default)
_INT_LIMIT = "integer string conversion"


def read_text(path: Path, *, what: str, max_bytes: int = MAX_DOCUMENT_BYTES) -> str:
    """The UTF-8 text of `path`, read no further than `max_bytes` (a FIFO or /dev/zero included)."""
    try:
        with path.open("rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    if len(data) > max_bytes:
        raise InputError(f"{what} {path} is larger than {_size(max_bytes)}, the most Aeon reads from a {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{what} {path}:{line}: not UTF-8 text (byte {exc.start})") from exc


def write_json(path: Path, value: Any) -> None:
    """`value` as indented JSON in `path` (its folder made), every character printable (OSError as it comes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = msgspec.json.format(msgspec.json.encode(value), indent=2).decode()
    path.write_text(json_safe(document), encoding="utf-8")


def json_argument(value: dict[str, Any], *, source: str) -> Any:
    """A JSON document given as an argument (`aeon mcp`'s plan), held to the bounds of a file: size, nesting, text
    that encodes."""
    text = json.dumps(value)
    if len(text.encode()) > MAX_DOCUMENT_BYTES:
        raise InputError(f"{source} is larger than {MAX_DOCUMENT_BYTES >> 20} MiB, the most Aeon reads")
    return parse_json(text, source=source)


def read_requests(path: Path) -> list[str]:
    """The requests of a JSONL file: each line `{"request": "..."}` or a JSON string; blank lines are skipped.
    Raises InputError naming the file and line of the first bad one."""
    lines = read_text(path, what="batch file", max_bytes=MAX_BATCH_BYTES).splitlines()
    requests = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        item = parse_json(line, source=str(path), first_line=number)
        request = item.get("request") if isinstance(item, dict) else item
        if not isinstance(request, str) or not request.strip():
            raise InputError(f'{path}:{number}: expected {{"request": "..."}} with a non-empty request')
        requests.append(request)
    if not requests:
        raise InputError(f"{path} holds no requests")
    return requests


def read_document(
    path: Path,
    *,
    what: str,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    max_depth: int = MAX_DEPTH,
    max_values: int | None = None,
) -> Any:
    """A JSON (`.json`) or YAML file as plain data. Raises InputError naming the file, the line and the rule;
    `max_values` bounds how many values (so how much memory) the parsed data may hold."""
    text = read_text(path, what=what, max_bytes=max_bytes)
    is_json = path.suffix.lower() == ".json"
    if max_values is not None and (n := _values_at_most(text, lines=not is_json)) > max_values:
        raise InputError(
            f"{what} {path} holds up to {n:,} JSON values, more than the {max_values:,} Aeon reads from a {what} "
            f"(each costs memory however short its text)"
        )
    if is_json:
        return parse_json(text, source=f"{what} {path}", max_depth=max_depth)
    return parse_yaml(text, source=f"{what} {path}", max_depth=max_depth)


def parse_yaml(text: str, *, source: str, max_depth: int = MAX_DEPTH) -> Any:
    try:
        data = load_yaml(text, max_depth=max_depth)
    except YamlRefused as exc:
        raise InputError(f"{source}:{exc.line}: {exc}") from None
    except ValueError as exc:
        if _INT_LIMIT not in str(exc):
            raise
        raise _too_long(text, source, 0) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        cause = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if "maximum nesting depth" in cause:  # libyaml's own bound (1,000) met before ours, inside one flow line
            raise InputError(f"{source}{where}: nested deeper than {max_depth} levels") from None
        raise InputError(f"{source}{where}: not valid YAML: {cause}") from None
    return _checked_text(data, text, source)


def parse_json(text: str, *, source: str, max_depth: int = MAX_DEPTH, first_line: int = 1) -> Any:
    """`text` as JSON; `first_line` numbers its lines when it is one line of a longer file (JSONL)."""
    shift = first_line - 1
    if (line := _too_deep(text, max_depth)) is not None:
        raise InputError(f"{source}:{line + shift}: nested deeper than {max_depth} levels")
    try:
        data = json.loads(text, object_pairs_hook=_unique_pairs)
    except _DuplicateKey:
        key, line, first = _first_duplicate(text)
        raise InputError(f"{source}:{line + shift}: duplicate key {key!r} (first at line {first + shift})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{source}:{exc.lineno + shift}: not valid JSON: {exc.msg}") from None
    except ValueError as exc:
        if _INT_LIMIT not in str(exc):
            raise
        raise _too_long(text, source, shift) from None
    return _checked_text(data, text, source)


def _too_long(text: str, source: str, shift: int) -> InputError:
    """The error for a number of more digits than Python reads, at the line of the first such run of digits."""
    limit = sys.get_int_max_str_digits()
    found = re.search(rf"\d{{{limit + 1},}}", text)
    where = f":{_line(text, found.start()) + shift}" if found else ""
    digits = f"a number of {len(found.group())} digits" if found else "a number"
    return InputError(
        f"{source}{where}: {digits} is longer than the {limit} digits Python reads as a number "
        "(sys.set_int_max_str_digits); write it as a string"
    )


class _DuplicateKey(Exception):
    pass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKey
    return out


def _values_at_most(text: str, *, lines: bool) -> int:
    """An upper bound on the values `text` parses to, counted at C speed: every value but the first follows a
    comma, opens a container or sits in one; in YAML (`lines`) a value may also start a line."""
    brackets = text.count("[") + text.count("{")
    return 2 * brackets + text.count(",") + (text.count("\n") if lines else 0) + 1


def _tokens(text: str) -> Iterator[re.Match[str]]:
    return _TOKEN.finditer(text)


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _too_deep(text: str, max_depth: int) -> int | None:
    """The line where brackets first nest deeper than `max_depth`, or None: a scan that builds nothing."""
    if text.count("[") + text.count("{") <= max_depth:
        return None
    depth = 0
    for m in _tokens(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > max_depth:
                return _line(text, m.start())
        elif c in "]}":
            depth -= 1
    return None


def _first_duplicate(text: str) -> tuple[str, int, int]:
    """(key, its line, the line of its first occurrence) for the first repeated key of an object, in reading order.
    Runs only once json.loads has found one, so the text is valid JSON here."""
    stack: list[dict[str, int] | None] = []  # per open bracket: an object's keys with their lines, None for arrays
    expect_key = False
    for m in _tokens(text):
        c = m.group()
        if c in "{[":
            stack.append({} if c == "{" else None)
            expect_key = c == "{"
        elif c in "}]":
            stack.pop()
        elif c == ",":
            expect_key = bool(stack) and stack[-1] is not None
        elif c == ":":
            expect_key = False
        elif expect_key and stack and (keys := stack[-1]) is not None:
            key, line = json.loads(c), _line(text, m.start())
            if key in keys:
                return key, line, keys[key]
            keys[key] = line
    raise AssertionError("json.loads found a duplicate key the scan does not")  # pragma: no cover


def _checked_text(data: Any, text: str, source: str) -> Any:
    """Refuse a string holding a lone surrogate (an escape like \\ud800): no UTF-8 encoder takes it, so it would
    stop the run at the first request body or log line. Walked only when the text has such an escape."""
    if not _SURROGATE_ESCAPE.search(text):
        return data
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise InputError(f"{source} holds an unpaired surrogate escape (\\ud800-\\udfff): not text") from None
    return data


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n} bytes"
