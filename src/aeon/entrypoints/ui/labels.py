"""What a warning record says on a run's page, in one line: the kind of record and what it was about."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def advisory(fields: dict[str, Any]) -> str:
    """An advisory (a record's or a result's) as one line: its kind, pass and what it says."""
    said = next((fields[k] for k in ("reason", "question", "detail", "resolution") if fields.get(k)), "")
    step = f" step {fields['step_id']}" if fields.get("step_id") else ""
    return f"{str(fields.get('kind', 'advisory')).replace('_', ' ')} (pass {fields.get('pass_number')}{step}): {said}"


def _not_sent(record: dict[str, Any]) -> str:
    worst = record.get("worst_case") or {}
    return f"LLM call for {record.get('purpose')} not sent: it could cross {record.get('cap')} ({worst})"


def _giveup(record: dict[str, Any]) -> str:
    status = f" (HTTP {record['status']})" if record.get("status") else ""
    attempts = record.get("attempts")
    return f"LLM call gave up after {attempts} attempt{'' if attempts == 1 else 's'}: {record.get('cause')}{status}"


WARNINGS: dict[str, Callable[[dict[str, Any]], str]] = {
    "phase_error": lambda r: f"phase {r.get('phase')} error {r.get('error_code')}: {r.get('detail')}",
    "llm_call_not_sent": _not_sent,
    "llm_giveup": _giveup,
    "advisory": advisory,
}
