"""The ledger: every LLM call with its tokens, latency and cost, summed per phase, per pass and per run.

Costs come from a price table (USD per million input, cached input and output tokens, per model). A model the
table does not name has an unknown cost (None), never a guess; a sum with one unknown part is unknown too.
Pure: no I/O, no clock; the gateway hands each call in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import msgspec

PER_MILLION = 1_000_000
# Prompt tokens are estimated before a call from the text sent: about 4 characters a token in English and JSON
# (OpenAI's rule of thumb), counted at 3 here so the estimate errs on the high side, plus a few tokens of framing
# per message. A cap is then checked against the worst case: this estimate plus the call's max_tokens.
CHARS_PER_TOKEN = 3
TOKENS_PER_MESSAGE = 4


class ModelPrice(msgspec.Struct, frozen=True, kw_only=True):
    """USD per million tokens. Cached input tokens are billed at `input` when the table gives no cached price."""

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        cached = min(max(cached_tokens, 0), prompt_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        usd = (prompt_tokens - cached) * self.input + cached * cached_rate + completion_tokens * self.output
        return usd / PER_MILLION


def price_of(prices: Mapping[str, ModelPrice], model: str | None) -> ModelPrice | None:
    """The model's price: its own entry, else the entry its name extends with a dated suffix ("gpt-x-2025-01-01"
    → "gpt-x"); None when the table does not name it."""
    if not model:
        return None
    if model in prices:
        return prices[model]
    stems = [name for name in prices if model.startswith(name + "-")]
    return prices[max(stems, key=len)] if stems else None


def estimate_prompt_tokens(texts: Sequence[str]) -> int:
    """An upper-leaning estimate of the prompt tokens of these messages, before they are sent."""
    return sum(math.ceil(len(t) / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE for t in texts)


class CallEntry(msgspec.Struct, kw_only=True):
    """One LLM call as the ledger keeps it. `cost` is None when the model's price is unknown."""

    purpose: str
    phase: str  # A, B, C or D
    pass_number: int
    step_id: str | None
    model: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    seconds: float = 0.0
    cost: float | None = None
    error: str | None = None  # the error code of a call that failed (it was still sent and counts)


class Tally(msgspec.Struct, kw_only=True):
    """Sums over some calls. `cost` is None as soon as one call's cost is unknown."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    seconds: float = 0.0
    cost: float | None = 0.0

    @classmethod
    def of(cls, entries: Iterable[CallEntry]) -> Tally:
        t = cls()
        for e in entries:
            t.calls += 1
            t.prompt_tokens += e.prompt_tokens
            t.completion_tokens += e.completion_tokens
            t.cached_tokens += e.cached_tokens
            t.seconds = round(t.seconds + e.seconds, 6)
            t.cost = None if t.cost is None or e.cost is None else t.cost + e.cost
        return t


class PhaseTally(msgspec.Struct, kw_only=True):
    phase: str
    pass_number: int
    tally: Tally


class LedgerReport(msgspec.Struct, kw_only=True):
    """What the result, the history, `aeon inspect` and the run_end record show: totals, per pass, per phase of
    each pass, and every call."""

    total: Tally
    by_pass: dict[str, Tally]
    by_phase: list[PhaseTally]
    calls: list[CallEntry]


class Ledger(msgspec.Struct, kw_only=True):
    """Every call of a run in order; part of the run-state record, so a resumed run keeps its accounts."""

    calls: list[CallEntry] = msgspec.field(default_factory=list)
    cost: float | None = 0.0  # spent so far (USD); None once a call could not be priced

    def add(self, entry: CallEntry) -> None:
        self.calls.append(entry)
        self.cost = None if self.cost is None or entry.cost is None else self.cost + entry.cost

    def total(self) -> Tally:
        return Tally.of(self.calls)

    def pace(self) -> str:
        """How long the LLM calls took, in words, for an ending caused by slow answers: "12 LLM calls took 540.0 s
        (mean 45.0 s, last 80.2 s, slowest 98.1 s)"; "no LLM call yet" without one."""
        if not self.calls:
            return "no LLM call yet"
        seconds = [c.seconds for c in self.calls]
        total, n = sum(seconds), len(seconds)
        noun = "LLM call" if n == 1 else "LLM calls"
        return (
            f"{n} {noun} took {total:.1f} s (mean {total / n:.1f} s, last {seconds[-1]:.1f} s, "
            f"slowest {max(seconds):.1f} s)"
        )

    def report(self) -> LedgerReport:
        passes = sorted({e.pass_number for e in self.calls})
        keys = list(dict.fromkeys((e.pass_number, e.phase) for e in self.calls))
        return LedgerReport(
            total=self.total(),
            by_pass={str(n): Tally.of(e for e in self.calls if e.pass_number == n) for n in passes},
            by_phase=[
                PhaseTally(
                    phase=phase,
                    pass_number=n,
                    tally=Tally.of(e for e in self.calls if e.pass_number == n and e.phase == phase),
                )
                for n, phase in keys
            ],
            calls=list(self.calls),
        )
