"""The one structured answer for a run cut short by TTL or a resource cap (01 US6)."""

from __future__ import annotations

import msgspec

from aeon.domain.budget import Cap, ExpirationType
from aeon.domain.history import PassSummary, StepResult
from aeon.domain.plan import Plan


class ExpiryMetrics(msgspec.Struct, kw_only=True):
    """The quality of the last assessment before the run stopped (02's TTL-expired metadata)."""

    completeness_score: float | None = None
    coherence_score: float | None = None
    consistency_status: dict[str, bool] | None = None
    detected_issues: list[str] = msgspec.field(default_factory=list)
    reason_codes: list[str] = msgspec.field(default_factory=lambda: ["ttl_expired"])
    pass_number: int = 0


class TTLExpirationResponse(msgspec.Struct, kw_only=True):
    expiration_type: ExpirationType
    phase: str
    pass_number: int
    plan_state: Plan | None
    execution_results: dict[str, StepResult]
    message: str
    ttl_remaining: int = 0
    latest_pass_result: PassSummary | None = None  # the most recent completed pass
    partial_result: PassSummary | None = None  # the cut pass, when no pass completed
    ttl_expired_metadata: ExpiryMetrics = msgspec.field(default_factory=ExpiryMetrics)
    converged: bool = False
    cap: Cap = Cap.TTL  # which ran out
    result_type: str = "ttl_expired"
    termination_reason: str = "ttl_expired"
