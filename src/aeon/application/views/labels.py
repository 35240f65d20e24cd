"""What a warning record says on a run's page, in one line: the kind of record and what it was about."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aeon.domain.audit_log import ReadRecord, as_plain
from aeon.domain.log_llm import LLMCallNotSentRecord, LLMGiveupRecord, PromptClippedRecord
from aeon.domain.log_pass import AdvisoryRecord, PhaseErrorRecord
from aeon.domain.log_run import WarningRecord


def advisory(fields: dict[str, Any]) -> str:
    """An advisory (a record's or a result's) as one line: its kind, pass and what it says."""
    said = next((fields[k] for k in ("reason", "question", "detail", "resolution") if fields.get(k)), "")
    step = f" step {fields['step_id']}" if fields.get("step_id") else ""
    return f"{str(fields.get('kind', 'advisory')).replace('_', ' ')} (pass {fields.get('pass_number')}{step}): {said}"


def untrusted(label: Any) -> str | None:
    """A provenance label as a record holds it ({"trusted": false, "sources": [...]}), when untrusted, in words:
    "untrusted: from tool:fetch_page"; None for a trusted label (or none at all)."""
    if not isinstance(label, Mapping) or label.get("trusted", True) is not False:
        return None
    sources = [str(s) for s in label.get("sources") or ()]
    return f"untrusted: from {', '.join(sources)}" if sources else "untrusted"


def warning(record: ReadRecord) -> str:
    """A warning-like record (a warning, a phase error, a call not sent or given up, an advisory …) as one line."""
    if isinstance(record, WarningRecord | PromptClippedRecord):
        return record.message
    if isinstance(record, PhaseErrorRecord):
        return f"phase {record.phase} error {record.error_code}: {record.detail}"
    if isinstance(record, LLMCallNotSentRecord):
        return f"LLM call for {record.purpose} not sent: it could cross {record.cap} ({record.worst_case})"
    if isinstance(record, LLMGiveupRecord):
        status = f" (HTTP {record.status})" if record.status else ""
        attempts = record.attempts
        return f"LLM call gave up after {attempts} attempt{'' if attempts == 1 else 's'}: {record.cause}{status}"
    if isinstance(record, AdvisoryRecord):
        return advisory(as_plain(record))
    return record.event.replace("_", " ")
