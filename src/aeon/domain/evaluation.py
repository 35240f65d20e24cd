"""Semantic validation reports and convergence assessments (02 US3/US5, 04 data model)."""

from __future__ import annotations

import enum
from typing import Any

import msgspec


class IssueType(enum.StrEnum):
    SPECIFICITY = "specificity"
    RELEVANCE = "relevance"
    CONSISTENCY = "consistency"
    HALLUCINATION = "hallucination"
    DO_SAY_MISMATCH = "do_say_mismatch"


class Severity(enum.StrEnum):
    """The one severity scale: validation issues use it as is; structured errors show it as a log level
    (CRITICAL / ERROR / WARNING / INFO)."""

    LOW = "LOW"
    MEDIUM = "MEDIUM"
    HIGH = "HIGH"
    CRITICAL = "CRITICAL"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @property
    def level(self) -> str:
        return _LEVEL[self]


_RANK = {Severity.LOW: 0, Severity.MEDIUM: 1, Severity.HIGH: 2, Severity.CRITICAL: 3}
_LEVEL = {Severity.LOW: "INFO", Severity.MEDIUM: "WARNING", Severity.HIGH: "ERROR", Severity.CRITICAL: "CRITICAL"}


class ArtifactType(enum.StrEnum):
    PLAN = "plan"
    STEP = "step"
    EXECUTION_ARTIFACT = "execution_artifact"
    CROSS_PHASE = "cross_phase"


class ValidationIssue(msgspec.Struct, kw_only=True):
    issue_id: str
    type: IssueType
    severity: Severity
    description: str
    location: dict[str, str] | None = None  # {step_id, artifact_reference}
    proposed_repair: dict[str, Any] | None = None  # {action, target, changes}
    source: str = "llm"  # "llm" or "deterministic": deterministic facts are detected without the model


class SemanticValidationReport(msgspec.Struct, kw_only=True):
    """Advisory, not a truth oracle: issues may be missed or be false positives."""

    validation_id: str
    artifact_type: ArtifactType
    issues: list[ValidationIssue]
    overall_severity: Severity
    issue_summary: dict[str, int]
    proposed_repairs: list[dict[str, Any]] = msgspec.field(default_factory=list)
    advisory: bool = True

    @classmethod
    def build(
        cls, validation_id: str, artifact_type: ArtifactType, issues: list[ValidationIssue]
    ) -> SemanticValidationReport:
        """Derive overall severity, summary counts and the repair list from the issues, so they always agree."""
        summary = {t.value: 0 for t in IssueType}
        for issue in issues:
            summary[issue.type.value] += 1
        overall = max((i.severity for i in issues), key=lambda s: s.rank, default=Severity.LOW)
        repairs = [dict(i.proposed_repair, issue_id=i.issue_id) for i in issues if i.proposed_repair]
        return cls(
            validation_id=validation_id,
            artifact_type=artifact_type,
            issues=issues,
            overall_severity=overall,
            issue_summary=summary,
            proposed_repairs=repairs,
        )


class ConvergenceCriteria(msgspec.Struct, frozen=True, kw_only=True):
    """Thresholds the convergence rules apply (application/judges/convergence.py); configurable per run."""

    min_completeness: float = 0.8
    min_coherence: float = 0.7
    max_severity: Severity = Severity.MEDIUM  # validation issues above this block convergence
    require_consistency: bool = True


class ConvergenceAssessment(msgspec.Struct, kw_only=True):
    converged: bool
    reason_codes: list[str]
    scores: dict[str, Any]  # completeness_score, coherence_score, consistency_status
    explanation: str
    detected_issues: list[str] = msgspec.field(default_factory=list)
