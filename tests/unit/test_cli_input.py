"""Bad input reaches the user as one line and exit 2, before any LLM call or log write."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_harness import SUM_STEP, assert_exit, invoke, log_of, one_line, plan_json, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env")


@pytest.mark.parametrize("request_text", ["", "   \n\t "], ids=["empty", "whitespace"])
def test_an_empty_request_exits_2_with_one_line_before_any_llm_call_or_log_write(
    tmp_path: Path, request_text: str
) -> None:
    config = scripted_config(tmp_path, [plan_json(SUM_STEP)])
    result = invoke("run", request_text, "--config", config)

    assert_exit(result, 2)
    assert "empty" in one_line(result.stderr)
    assert result.stdout == ""
    assert not log_of(tmp_path).exists()
