"""The ledger as `aeon inspect` shows it: one row per phase of each pass, then the run's total."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

_HEAD = (
    f"  {'pass':>4} {'phase':<5} {'calls':>5} {'prompt':>7} {'cached':>7} {'compl':>6} {'seconds':>8} "
    f"{'cost USD':>10}\n"
)


def _cost(value: Any) -> str:
    return "unknown" if value is None else f"{value:.6f}"


def _row(pass_label: str, phase: str, t: Mapping[str, Any]) -> str:
    return (
        f"  {pass_label:>4} {phase:<5} {t.get('calls', 0):>5} {t.get('prompt_tokens', 0):>7} "
        f"{t.get('cached_tokens', 0):>7} {t.get('completion_tokens', 0):>6} {t.get('seconds', 0.0):>8.3f} "
        f"{_cost(t.get('cost')):>10}\n"
    )


def ledger_lines(ledger: Mapping[str, Any] | None) -> Iterator[str]:
    """The per-phase table, line by line; cost "unknown" when a call's model has no price in the table (never a
    guess). Nothing without a ledger."""
    if not ledger:
        return
    yield "\nledger (LLM calls per phase; cost from the price table):\n"
    yield _HEAD
    for row in ledger.get("by_phase") or []:
        yield _row(str(row.get("pass_number")), str(row.get("phase")), row.get("tally") or {})
    yield _row("all", "total", ledger.get("total") or {})
