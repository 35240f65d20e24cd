"""Plan snapshots a log has checked: scanned for secrets and large texts once, however many records repeat them."""

from __future__ import annotations

from typing import Any

import msgspec

from aeon.adapters.eventlog.shrink import LARGE, encode, may_hold_large_text
from aeon.application.redaction import Redactor

# Where the Recorder puts a plan snapshot (msgspec.Raw): a cycle record's plan_state, a phase record's state_before
# and state_after (dicts holding it under "plan_state").
FIELDS = ("plan_state", "state_before", "state_after")
KEEP, HELD_BYTES = 16, 4 * 1024 * 1024  # the snapshots found clean that are remembered: at most this many, and bytes


class CheckedSnapshots:
    """An unchanged plan is the same Raw object from record to record (Recorder.snapshot). A snapshot written in a
    line found free of secrets and of large texts is remembered by identity (and held, so that its id is not
    reused); a record whose snapshots are all remembered is checked for the rest of its fields only. The verdict is
    the one a check of the whole line gives: a snapshot is a whole JSON object, so a text or a needle cannot reach
    across its braces (when the redactor says that none holds a brace)."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._clean: dict[int, msgspec.Raw] = {}  # in the order found: the oldest is forgotten first
        self._held = 0
        self._fields: dict[type, tuple[str, ...]] = {}  # a record type's snapshot fields
        self._unchecked: list[msgspec.Raw] = []  # the snapshots of the record last given, not yet found clean

    def plain_line(self, record: msgspec.Struct) -> bytes | None:
        """The record's line as it is (shrink.encode) when its snapshots were all found clean before and the rest of
        it needs no redaction nor shortening; None when it must take the whole way (then `mark_clean` may follow)."""
        self._unchecked = []
        kind = type(record)
        names = self._fields.get(kind)
        if names is None:
            names = self._fields[kind] = tuple(f for f in getattr(kind, "__struct_fields__", ()) if f in FIELDS)
        if not names:
            return None
        snapshots, others = _apart(record, names)
        self._unchecked = [s for s in snapshots if id(s) not in self._clean and _an_object(s)]
        if self._unchecked or not snapshots or not self._redactor.scans_objects_apart:
            return None
        try:
            rest = msgspec.json.encode(msgspec.structs.replace(record, **others), enc_hook=str)
        except (TypeError, UnicodeEncodeError):
            return None  # a key JSON cannot take or a lone surrogate: the whole way makes it plain
        if self._redactor.may_hold(rest) or (len(rest) >= LARGE and may_hold_large_text(rest)):
            return None
        return encode(record)

    def mark_clean(self) -> None:
        """The line of the record last given to `plain_line` was written as it is (nothing redacted, nothing cut):
        its snapshots are clean."""
        for snapshot in self._unchecked:
            while self._clean and (len(self._clean) >= KEEP or self._held + len(snapshot) > HELD_BYTES):
                self._held -= len(self._clean.pop(next(iter(self._clean))))
            self._clean[id(snapshot)] = snapshot
            self._held += len(snapshot)
        self._unchecked = []


def _apart(record: msgspec.Struct, names: tuple[str, ...]) -> tuple[list[msgspec.Raw], dict[str, Any]]:
    """The record's snapshots, and its snapshot fields with each snapshot as null."""
    snapshots: list[msgspec.Raw] = []
    others: dict[str, Any] = {}
    for name in names:
        value = getattr(record, name)
        if type(value) is msgspec.Raw:
            snapshots.append(value)
            others[name] = None
        elif type(value) is dict and (inner := [v for v in value.values() if type(v) is msgspec.Raw]):
            snapshots += inner
            others[name] = {k: None if type(v) is msgspec.Raw else v for k, v in value.items()}
    return snapshots, others


def _an_object(snapshot: msgspec.Raw) -> bool:
    view = memoryview(snapshot)
    return len(view) > 1 and view[0] == ord("{") and view[-1] == ord("}")
