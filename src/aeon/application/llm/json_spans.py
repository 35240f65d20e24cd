"""Where the JSON is in a model's answer: after a reasoning block, in a fence, amid prose, or short of a last brace."""

from __future__ import annotations

import re

FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_REASONING_OPEN = re.compile(r"\s*<(think|thinking|reasoning)>", re.IGNORECASE)
_REASONING_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
# Opening braces tried as the start of an object: prose braces are few, and an answer full of them is no plan.
MAX_STARTS = 64


def without_reasoning(text: str) -> str | None:
    """`text` after its reasoning block (`<think>…</think>`, as reasoning models write it): what follows the last
    closing tag, which may come without its opening tag (the chat template opened it). `text` itself when it has no
    block; None when a block opens and never closes, or nothing JSON-like follows it: a draft inside the reasoning
    is not the answer."""
    closes = list(_REASONING_CLOSE.finditer(text))
    if not closes:
        return None if _REASONING_OPEN.match(text) else text
    rest = text[closes[-1].end() :].strip()
    return rest if "{" in rest or "[" in rest else None


def scan(text: str, start: int) -> tuple[int | None, int, bool]:
    """Scan the value opening at `start`: (the index just past its close, or None when it never closes; the depth
    left open at the end; whether the text ends inside a string or a comment).

    Quotes of either kind open strings (models write Python-style literals), `//` and `/* */` comments are skipped,
    and closing brackets are counted without matching their kind."""
    depth, quote, i, n = 0, "", start, len(text)
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
            if end < 0:
                return None, depth, True
            i = end
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1, 0, False
        i += 1
    return None, depth, bool(quote)


def first_bracket(text: str) -> int:
    """Where the first '{' or '[' is; -1 when there is none."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    return min(starts) if starts else -1


def looks_truncated(raw: str) -> bool:
    """True when the JSON-looking part of `raw` never closes: the text ends inside an object, array or string.
    Text after the first value closes is prose; a reasoning block before it is skipped."""
    body = without_reasoning(raw)
    text = raw if body is None else body
    m = FENCE.search(text)
    text = m.group(1) if m else text
    start = first_bracket(text)
    return start >= 0 and scan(text, start)[0] is None


def with_final_brace(text: str) -> str | None:
    """The object opening at the first bracket of `text` with the one '}' it lacks at the end, when that is all it
    lacks: every other object, array and string is closed and its last member is complete. None otherwise: an
    answer cut off deeper is not closed into a shorter one that looks whole."""
    start = first_bracket(text)
    if start < 0 or text[start] != "{":
        return None
    end, depth, inside = scan(text, start)
    body = text[start:].rstrip()
    if end is not None or depth != 1 or inside or body[-1] in ",:{[":
        return None
    return body + "}"


def extract(text: str) -> str | None:
    """The JSON-looking part of `text`: a fenced block, else the span from the first '{' or '[' to the last."""
    m = FENCE.search(text)
    if m:
        text = m.group(1).strip()
    start = first_bracket(text)
    if start < 0:
        return None
    end = max(text.rfind("}"), text.rfind("]"))
    return text[start : end + 1] if end > start else text[start:]


def candidates(text: str) -> list[str]:
    """Where the JSON may be: the span from the first '{' or '[' to the last '}' or ']' (a fence inside a string
    value stays inside it), then a fenced block."""
    out = []
    start = first_bracket(text)
    end = max(text.rfind("}"), text.rfind("]"))
    if start >= 0 and end > start:
        out.append(text[start : end + 1])
    if (m := FENCE.search(text)) is not None:
        out.append(m.group(1).strip())
    return out
