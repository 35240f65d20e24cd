"""Grounding: claims in a final answer that a tool was used, or produced a value, checked against the tool-call log.

Deliberately narrow (precision over recall): only explicit claims such as "called the calculator", "using echo",
"the calculator returned 15" or "echo gave 'hi'" are checked, and a claim preceded by a negation or a modal
("without using the calculator", "could have called echo") is not a claim.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from aeon.domain.records import ToolCall

_USE_VERBS = r"called|calling|used|using|ran|running|invoked|invoking|via"
_RESULT_VERBS = (
    r"returned|returns|produced|produces|gave|gives|yielded|yields|output|outputs|computed|computes|reported|"
    r"reports|answered|says|said|printed|prints"
)
_FILLER = r"(?:(?:a|an|the)\s+)?(?:(?:value|result|answer|output|number|text|string)\s+(?:of\s+)?)?:?\s*"
_NUMBER = r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
# Words that turn a following "used the calculator" into a non-claim.
_NEGATORS = frozenset(
    {"no", "not", "never", "without", "didn't", "don't", "doesn't", "wasn't", "weren't", "isn't", "hasn't"}
    | {"haven't", "instead", "could", "would", "should", "might", "may", "can", "if", "unless", "whether"}
)
_QUOTES = (("q1", "'", "'"), ("q2", '"', '"'), ("q3", "“", "”"), ("q4", "‘", "’"))
_VALUE = "(?:(?P<number>{}){}|{})".format(
    _NUMBER, r"(?!\w|\.\d)", "|".join(f"{o}(?P<{g}>[^{c}\\n]*){c}" for g, o, c in _QUOTES)
)
_NUMBER_IN_TEXT = re.compile(_NUMBER)


def _patterns(tool: str) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    name = rf"[`'\"]?{re.escape(tool)}[`'\"]?(?:\s+tool)?"
    use = re.compile(rf"\b(?:{_USE_VERBS})\s+(?:the\s+)?{name}(?!\w)", re.IGNORECASE)
    said = re.compile(rf"(?<!\w){name}\s+(?:{_RESULT_VERBS})\s+{_FILLER}{_VALUE}", re.IGNORECASE)
    was = re.compile(rf"(?<!\w){name}(?:'s)?\s+(?:result|output|answer)\s+(?:was|is|of)\s*:?\s*{_VALUE}", re.IGNORECASE)
    return use, said, was


def _negated(text: str, start: int) -> bool:
    clause = re.split(r"[.!?;:,\n]", text[max(0, start - 60) : start])[-1]  # negations do not cross clauses
    before = re.findall(r"[\w']+", clause.lower())
    return any(word in _NEGATORS for word in before[-3:])


def _claims(answer: str, tool: str) -> Iterator[tuple[int, str | float | None, str]]:
    """(position, claimed value or None, value as written) for every claim about `tool` in `answer`."""
    use, said, was = _patterns(tool)
    for m in use.finditer(answer):
        if not _negated(answer, m.start()):
            yield m.start(), None, ""
    for pattern in (said, was):
        for m in pattern.finditer(answer):
            if _negated(answer, m.start()):
                continue
            number = m.group("number")
            if number is not None:
                yield m.start(), float(number.replace(",", "")), number
            else:
                text = next(m.group(g) for g, _, _ in _QUOTES if m.group(g) is not None)
                yield m.start(), text, f"'{text}'"


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return float(str(value).replace(",", "").strip())
    except ValueError:
        return None


def _matches(claim: str | float, outputs: Sequence[Any]) -> bool:
    """Numbers compare numerically (also numbers inside output text); text case-insensitively, or as a part."""
    claimed_number = claim if isinstance(claim, float) else _as_number(claim)
    for leaf in (leaf for out in outputs for leaf in _leaves(out)):
        if claimed_number is not None:
            found = [_as_number(leaf)]
            if isinstance(leaf, str):
                found += [_as_number(n) for n in _NUMBER_IN_TEXT.findall(leaf)]
            if any(n is not None and math.isclose(n, claimed_number, rel_tol=1e-9, abs_tol=1e-9) for n in found):
                return True
        if isinstance(claim, str) and leaf is not None:
            wanted, got = claim.strip().casefold(), str(leaf).strip().casefold()
            if wanted and (wanted == got or wanted in got):
                return True
    return False


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    return json.dumps(value, default=str)


def grounding_issues(answer: str, tool_calls: Sequence[ToolCall], tool_names: Collection[str]) -> list[str]:
    """Hallucination messages for tool claims in `answer` that the tool-call log does not back, in answer order."""
    found: list[tuple[int, str]] = []
    for tool in sorted(set(tool_names), key=len, reverse=True):
        ok = [c.output for c in tool_calls if c.tool == tool and c.error is None]
        attempted = any(c.tool == tool for c in tool_calls)
        for pos, claim, written in _claims(answer, tool):
            if not ok:
                suffix = " successfully" if attempted else ""
                found.append(
                    (pos, f"hallucination: answer claims tool '{tool}' was used but it was never called{suffix}")
                )
            elif claim is not None and not _matches(claim, ok):
                produced = " or ".join(dict.fromkeys(_show(o) for o in ok))
                found.append(
                    (pos, f"hallucination: answer claims {tool} produced {written} but it produced {produced}")
                )
    return list(dict.fromkeys(msg for _, msg in sorted(found)))
