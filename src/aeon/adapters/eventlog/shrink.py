"""Large texts in log records: a repeat becomes a marker, a long first copy keeps its head, a record has a cap."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import msgspec

LARGE = 1024  # characters: a text this long is written once per log; a repeat is a ~60-byte marker naming the copy
MIN_CAP = 1024  # the smallest record or text cap: room for the stamps, a marker and some text
_MIN_CUT = 128  # characters: shorter texts are never cut to fit a record, a marker would save nothing
_MARKER_ROOM = 96  # bytes a truncation marker may take, sizes of up to 15 digits included
_MAX_CUTS = 1000  # a record still too big after this many cuts is written as a summary
# Characters that some line readers (Python's str.splitlines among them) treat as line breaks; valid JSON may carry
# them raw inside strings, so they are escaped to keep exactly one record per line for every reader.
_LINE_BREAKS = ((b"\xc2\x85", b"\\u0085"), (b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


class _Cut(NamedTuple):
    text: str  # the cut string itself, held so its id stays its own while the record is rendered
    size: int  # UTF-8 bytes of the whole text
    digest: str  # its sha256 prefix
    head: str  # the part kept in front of the marker


class RecordShrinker:
    """The last processor of the log's chain: renders a redacted record as one JSON line within the caps.

    A string of LARGE or more characters already written to this log becomes `[aeon:repeat seq=N bytes=B
    sha256=H]` (N is the seq of the record holding the copy); a first copy that would take more than
    `max_string_bytes` on the line (escapes included) keeps its head followed by `[aeon:truncated bytes=B sha256=H
    kept=K]` (B UTF-8 bytes and the sha256 prefix H describe the whole text, K the head). A line still over
    `max_record_bytes` has its largest strings cut the same way until it fits; if cutting cannot make it fit, the
    record is written as its stamps and an `_oversized` summary. `commit` after the line was written makes its texts
    count as written; `forget` starts over (a new file, a new correlation id).
    """

    def __init__(self, *, max_record_bytes: int, max_string_bytes: int, stamps: Sequence[str]) -> None:
        for name, value in (("max_record_bytes", max_record_bytes), ("max_string_bytes", max_string_bytes)):
            if value < MIN_CAP:
                raise ValueError(f"{name} must be at least {MIN_CAP} bytes, got {value}")
        self.max_record_bytes, self.max_string_bytes = max_record_bytes, max_string_bytes
        self._stamps = tuple(stamps)
        self._written: dict[bytes, int] = {}  # sha256 of a large text → seq of the record holding its first copy
        self._pending: dict[bytes, int] = {}  # large texts of the record being written
        self._cuts: dict[int, _Cut] = {}  # id of a string this record cut → what the whole text was

    def shrink(self, record: Any, line: bytes) -> bytes:
        """`line` (the record's encoding, from `encode`) within the caps; `record` may hold Structs, which are
        turned into plain JSON values only when a text has to be replaced."""
        if self._pending or self._cuts:  # left from a record that was not written
            self._pending, self._cuts = {}, {}
        converted = False
        # Fast path: most records hold no large string, and only a long line can; the scan runs at C speed.
        if len(line) >= LARGE and may_hold_large_text(line):
            record, converted = plain(record), True
            self._large_texts(record, record["seq"])
            line = encode(record)
        if len(line) <= self.max_record_bytes:
            return line
        return self._fit(record if converted else plain(record), line)

    def as_is(self, line: bytes) -> bytes | None:
        """What `shrink` gives for the line of a record that holds no large text: the line when within the cap, else
        None (then `shrink` cuts it)."""
        self._pending, self._cuts = {}, {}
        return line if len(line) <= self.max_record_bytes else None

    def commit(self) -> None:
        if self._pending:
            self._written.update(self._pending)
            self._pending = {}

    def forget(self) -> None:
        self._written, self._pending = {}, {}

    def _large_texts(self, node: Any, seq: int) -> None:
        for key, value in node.items() if isinstance(node, dict) else enumerate(node):
            if isinstance(value, str):
                if len(value) >= LARGE:
                    node[key] = self._once(value, seq)
            elif isinstance(value, dict | list):
                self._large_texts(value, seq)

    def _once(self, text: str, seq: int) -> str:
        data = text.encode("utf-8", "surrogatepass")
        digest = hashlib.sha256(data).digest()
        held = self._written.get(digest, self._pending.get(digest))
        if held is not None:
            return f"[aeon:repeat seq={held} bytes={len(data)} sha256={digest.hex()[:16]}]"
        self._pending[digest] = seq
        if len(data) <= self.max_string_bytes and _on_line(text) <= self.max_string_bytes:
            return text
        return self._cut(data, len(data), digest.hex()[:16], self.max_string_bytes)

    def _cut(self, data: bytes, size: int, digest: str, budget: int) -> str:
        """The text's head and a truncation marker, taking at most `budget` bytes on the line."""
        head = _head(data, budget - _MARKER_ROOM)
        cut = head + f"[aeon:truncated bytes={size} sha256={digest} kept={len(head.encode('utf-8', 'ignore'))}]"
        self._cuts[id(cut)] = _Cut(cut, size, digest, head)
        return cut

    def _fit(self, record: dict[str, Any], line: bytes) -> bytes:
        for _ in range(_MAX_CUTS):
            slots = [s for s in _strings(record, self._stamps) if len(s[2]) >= _MIN_CUT]
            if not slots:
                break
            node, key, value = max(slots, key=lambda s: len(s[2]))
            whole = self._cuts.get(id(value))
            head = whole.head if whole else value
            data = head.encode("utf-8", "surrogatepass")
            size, digest = (whole.size, whole.digest) if whole else (len(data), hashlib.sha256(data).hexdigest()[:16])
            node[key] = self._cut(data, size, digest, _on_line(value) - (len(line) - self.max_record_bytes))
            line = encode(record)
            if len(line) <= self.max_record_bytes:
                return line
        summary = {"bytes": len(line), "sha256": hashlib.sha256(line).hexdigest()[:16]}
        summary["fields"] = [str(k)[:64] for k in record if k not in self._stamps][:20]
        return encode({**{k: record[k] for k in self._stamps if k in record}, "_oversized": summary})


def _strings(node: Any, skip: Sequence[str] = ()) -> Iterator[tuple[Any, Any, str]]:
    """Every string value in the tree with its container and key (top-level `skip` keys left out)."""
    for key, value in node.items() if isinstance(node, dict) else enumerate(node):
        if isinstance(value, str):
            if key not in skip:
                yield node, key, value
        elif isinstance(value, dict | list):
            yield from _strings(value)


def _head(data: bytes, budget: int) -> str:
    """The longest head of the UTF-8 text (give or take an escape) that takes at most `budget` bytes on the line."""
    keep = max(budget, 0)
    while keep > 0:
        head = data[:keep].decode("utf-8", "ignore")  # "ignore" drops a character the cut split
        written = _on_line(head)
        if written <= budget:
            return head
        keep = min(keep - 1, keep * budget // written)  # escapes spread evenly shrink it in one step
    return ""


def _on_line(text: str) -> int:
    """Bytes the text takes inside a JSON line: escapes counted, quotes not."""
    return len(encode(text)) - 2


def may_hold_large_text(line: bytes) -> bool:
    """False when no JSON string in the line can have LARGE characters; cheap, since most lines have none.

    Inside a string every quote byte is escaped, and its two-byte escape stands for one character: with `\\"` made
    one byte, a string of LARGE characters is a run of LARGE bytes or more free of quotes. Such a run covers one of
    half-LARGE blocks laid end to end entirely, so probing the blocks (memchr speed) never misses one; a block with no
    quote is then measured to the quotes either side, so a shorter run (a text of 600 characters) costs no walk.
    """
    if line.find(b"\\") >= 0:  # one byte looked for at memchr speed; a two-byte `in` is several times slower
        line = line.replace(b'\\"', b"x")
    half, find, end = LARGE // 2, line.find, len(line)
    start = 0
    while start + half <= end:
        if find(b'"', start, start + half) >= 0:
            start += half
            continue
        after = find(b'"', start + half)
        after = end if after < 0 else after
        if after - line.rfind(b'"', 0, start) - 1 >= LARGE:
            return True
        start = after + 1  # the blocks tile on from the quote that ended this run
    return False


def plain(record: Any) -> Any:
    """The record as plain JSON values (Structs, enums, datetimes, embedded Raw JSON … as the line holds them), a
    fresh tree to change in place."""
    return msgspec.json.decode(msgspec.json.encode(record, enc_hook=str))


def encode(value: Any) -> bytes:
    """One JSON line, Structs and enums included (an unknown object as its str), line-break characters escaped."""
    return escape_breaks(msgspec.json.encode(value, enc_hook=str))


def escape_breaks(line: bytes) -> bytes:
    if line.isascii():  # the break characters are all multi-byte: an ASCII line has none (a word-at-a-time scan)
        return line
    for raw, escaped in _LINE_BREAKS:
        if raw in line:
            line = line.replace(raw, escaped)
    return line
