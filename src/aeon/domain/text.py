"""Text from models, tools, plans and files made inert before it reaches a terminal or a JSON document on stdout;
and the request a user typed, refused when no run could send it."""

from __future__ import annotations

# Bidi embeddings, overrides and isolates (and the marks) reorder what a reader sees: a step id or an answer could
# show reversed or hidden text. They are made visible like the control characters.
_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
# C0 (ESC starts CSI and OSC sequences; CR and BS overwrite a line), DEL and C1 (U+009B is a one-character CSI).
# Newline and tab stay: multi-line text is legitimate and they move the cursor in no way that hides anything.
_CONTROLS = (*(c for c in range(0x20) if chr(c) not in "\n\t"), 0x7F, *range(0x80, 0xA0))


def _visible(code: int) -> str:
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


_TERMINAL = {code: _visible(code) for code in (*_CONTROLS, *_BIDI)}
# In encoded JSON the C0 controls are already \u escapes (JSON requires it); the others are legal raw characters
# inside a string, and a \u escape is the same JSON value: lossless, so the document still decodes to what it held.
_JSON = {code: f"\\u{code:04x}" for code in (0x7F, *range(0x80, 0xA0), *_BIDI)}


def terminal_safe(text: str) -> str:
    """`text` with every control character and bidi control shown as a visible escape (ESC as `\\x1b`), so that
    no escape sequence a model, a tool or a file carries can clear the screen, set the title or hide text."""
    return text.translate(_TERMINAL)


def json_safe(document: str) -> str:
    """An encoded JSON document with the raw C1 and bidi controls inside its strings written as `\\u` escapes."""
    return document.translate(_JSON)


def request_problem(request: str) -> str | None:
    """Why the request cannot be run, or None: it is empty, or not UTF-8 text. Python hands bytes that are not
    UTF-8 over as lone surrogates (`aeon run $'\\xff'`); no request body can hold them, so they are refused before
    the run starts."""
    if not request.strip():
        return 'the request is empty: say what you want done, e.g. aeon run "calculate the sum of 5 and 10"'
    try:
        request.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"the request is not UTF-8 text (character {exc.start + 1} is an undecodable byte); "
            "pass it in your terminal's UTF-8 encoding"
        )
    return None


def cut(text: str, limit: int) -> str:
    """`text` bounded to `limit` characters, saying how many more were cut."""
    return text if len(text) <= limit else f"{text[:limit]} [… {len(text) - limit:,} more characters cut]"
