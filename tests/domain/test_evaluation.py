"""Validation reports derive their summary from their issues, so the report can never contradict itself."""

from __future__ import annotations

import pytest

from aeon.domain.evaluation import ArtifactType, IssueType, SemanticValidationReport, Severity, ValidationIssue


def issue(n: int, kind: IssueType, severity: Severity, repair: dict[str, str] | None = None) -> ValidationIssue:
    return ValidationIssue(issue_id=f"V{n}", type=kind, severity=severity, description="d", proposed_repair=repair)


def test_an_empty_report_is_low_with_every_issue_type_counted_as_zero_and_advisory():
    report = SemanticValidationReport.build("val-1", ArtifactType.PLAN, [])
    assert report.overall_severity is Severity.LOW and report.advisory is True
    assert report.issue_summary == {t.value: 0 for t in IssueType} and report.proposed_repairs == []


def test_the_overall_severity_is_the_worst_issue_and_the_summary_counts_each_type():
    issues = [
        issue(1, IssueType.RELEVANCE, Severity.LOW),
        issue(2, IssueType.CONSISTENCY, Severity.CRITICAL),
        issue(3, IssueType.CONSISTENCY, Severity.MEDIUM),
    ]
    report = SemanticValidationReport.build("val-1", ArtifactType.CROSS_PHASE, issues)
    assert report.overall_severity is Severity.CRITICAL
    assert report.issue_summary["consistency"] == 2 and report.issue_summary["relevance"] == 1
    assert sum(report.issue_summary.values()) == len(issues)


def test_proposed_repairs_list_each_repair_once_with_its_issue_id():
    fix = {"action": "rewrite_step", "target": "s1"}
    report = SemanticValidationReport.build(
        "val-1",
        ArtifactType.PLAN,
        [issue(1, IssueType.SPECIFICITY, Severity.LOW, fix), issue(2, IssueType.RELEVANCE, Severity.LOW)],
    )
    assert report.proposed_repairs == [{"action": "rewrite_step", "target": "s1", "issue_id": "V1"}]
    assert fix == {"action": "rewrite_step", "target": "s1"}  # the issue's own repair is not changed


@pytest.mark.parametrize(
    ("severity", "rank", "level"),
    [
        (Severity.LOW, 0, "INFO"),
        (Severity.MEDIUM, 1, "WARNING"),
        (Severity.HIGH, 2, "ERROR"),
        (Severity.CRITICAL, 3, "CRITICAL"),
    ],
)
def test_severities_are_ordered_and_map_onto_log_levels(severity, rank, level):
    assert (severity.rank, severity.level) == (rank, level)
