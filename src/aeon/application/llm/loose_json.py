"""JSON written loosely, as models and Python write it (either quote, trailing commas, True/False/None), rewritten
as strict JSON without changing a key or a value."""

from __future__ import annotations

PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
JSON_WORDS = frozenset({"true", "false", "null", "NaN", "Infinity"})


def relaxed(text: str) -> str | None:
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
            if word not in PY_LITERALS and word not in JSON_WORDS:
                return None  # a bare word: not loosely written JSON
            out.append(PY_LITERALS.get(word, word))
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


def python_literals(text: str) -> str:
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
            out.append(PY_LITERALS.get(word, word))
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)
