"""Prompts as data: templates with named slots, rendered only when every slot has a non-empty value."""

from __future__ import annotations

import functools
import string
from collections.abc import Mapping

import msgspec

from aeon.application.errors import ApplicationError


class PromptSlotError(ApplicationError):
    code = "AEON.PROMPT.MISSING_SLOT"


class PromptTemplate(msgspec.Struct, frozen=True, kw_only=True):
    """One prompt kind in two parts: `guide`, what the kind asks for and its worked examples (static), and `text`, the
    per-call part (short labels and slots), always last. A `shared` kind is asked in every pass of the runs that use
    it: its guide is part of the run's shared prefix (prompts/layout.py) and `render` gives the per-call part alone;
    any other kind renders its guide, then its per-call part."""

    name: str
    text: str
    guide: str = ""
    shared: bool = False
    stop: tuple[str, ...] = ()  # sequences that end one answer: the label that opens the next example

    @property
    def slots(self) -> frozenset[str]:
        return _slots(self.text)

    def render(self, values: Mapping[str, str]) -> str:
        missing = sorted(s for s in self.slots if not str(values.get(s) or "").strip())
        if missing:
            raise PromptSlotError(f"prompt {self.name!r}: empty or missing slot(s) {', '.join(missing)}")
        return self.fill(values)

    def fill(self, values: Mapping[str, str]) -> str:
        """The message `render` gives, empty slots allowed: what the prompt budget measures a call's fixed text by."""
        filled = string.Template(self.text).substitute({k: str(v) for k, v in values.items()})
        return filled if self.shared or not self.guide else f"{self.guide}\n\n{filled}"


@functools.lru_cache(maxsize=256)  # a template is parsed once, not on every render
def _slots(text: str) -> frozenset[str]:
    names = {m.group("named") or m.group("braced") for m in string.Template.pattern.finditer(text)}
    return frozenset(n for n in names if n)
