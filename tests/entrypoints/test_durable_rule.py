"""A run said not to be durable that may need a decision nobody here can give is refused before it starts (exit 2,
one line, nothing run), not silently made durable nor run with the call denied: the one rule of every front door."""

from __future__ import annotations

from cli_harness import CONFIG_DIR, assert_exit, invoke


def test_aeon_run_no_durable_with_nobody_to_ask_about_an_approval_is_refused_before_it_starts() -> None:
    config = CONFIG_DIR / "scripted-approval.yaml"
    result = invoke("run", "publish the release notes", "--config", config, "--no-durable")

    assert_exit(result, 2)
    assert "may need approval and nobody can be asked here" in result.stderr
    assert "--no-durable" in result.stderr
