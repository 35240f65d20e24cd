"""Provenance: where a value came from (a label) and what calling a tool does (its effect).

A value is trusted when everything it was made from is: the request, the config, the plan made before any tool output
was read, a trusted tool's output. A tool output the config does not trust, and whatever an LLM wrote after reading
one, is untrusted; `sources` name where it came from ("tool:read_file", "mcp:git/git_log"): the chain an approval
request shows. Aeon names the sources of untrusted values only; a trusted value's label is TRUSTED, small in every
plan snapshot.
"""

from __future__ import annotations

import enum

import msgspec


class Label(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The provenance of one value: trusted only if all it came from is; `sources` sorted and unique."""

    trusted: bool = True
    sources: tuple[str, ...] = ()

    def join(self, other: Label) -> Label:
        """The label of a value made from both: trusted only if both are, from the union of their sources."""
        if other is self or other == TRUSTED:
            return self
        if self == TRUSTED:
            return other
        trusted = self.trusted and other.trusted
        if trusted == self.trusted and set(other.sources) <= set(self.sources):
            return self
        return Label(trusted=trusted, sources=tuple(sorted({*self.sources, *other.sources})))

    @classmethod
    def of(cls, source: str, *, trusted: bool) -> Label:
        return cls(trusted=trusted, sources=(source,))

    def shown(self) -> str:
        """How a record or a person sees it: "trusted", or "untrusted (from tool:x, mcp:y)"."""
        if self.trusted:
            return "trusted"
        return f"untrusted (from {', '.join(self.sources)})" if self.sources else "untrusted"


TRUSTED = Label()


class Effect(enum.StrEnum):
    """What calling a tool does: nothing outside the run, reads, writes, or reaches out (sends, pays)."""

    NONE = "none"
    READ = "read"
    WRITE = "write"
    EXTERNAL = "external"


def consequential(effect: Effect | None) -> bool:
    """Whether a call with this effect needs its decision to be trusted: write, external, or undeclared (None)."""
    return effect is None or effect in (Effect.WRITE, Effect.EXTERNAL)
