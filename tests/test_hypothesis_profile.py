"""Property tests take their Hypothesis settings from the one profile in tests/conftest.py, so a busy CI machine
cannot fail them on a deadline."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import HealthCheck, settings

TESTS = Path(__file__).parent


def _settings_overrides(path: Path) -> list[str]:
    """`deadline` or `suppress_health_check` passed to a `settings(...)` call outside the profile registration."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name == "settings":
            found += [
                f"{path.relative_to(TESTS)}:{node.lineno} {k.arg}=" for k in node.keywords if k.arg != "max_examples"
            ]
    return found


def test_no_test_sets_its_own_deadline_or_health_checks():
    assert [hit for path in sorted(TESTS.rglob("*.py")) for hit in _settings_overrides(path)] == []


def test_the_loaded_profile_has_no_deadline_and_tolerates_slow_data():
    assert settings.default is not None
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check
