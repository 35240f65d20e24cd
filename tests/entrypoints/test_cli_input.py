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


# -- config files ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "kind"), [("- llm\n- run\n", "list"), ("just words\n", "string"), ("42\n", "number")])
def test_a_config_that_is_not_a_mapping_exits_2_naming_the_file_and_what_it_holds(
    tmp_path: Path, text: str, kind: str
) -> None:
    config = tmp_path / "aeon.yaml"
    config.write_text(text, encoding="utf-8")
    result = invoke("run", "hello", "--config", config, "--quiet")

    assert_exit(result, 2)
    line = one_line(result.stderr)
    assert str(config) in line
    assert f"holds a {kind}" in line
    assert "sequence element" not in line and "NoneType" not in line


@pytest.mark.parametrize("text", ["", "# nothing to override yet\n\n"], ids=["empty", "comments-only"])
def test_an_empty_config_file_is_an_empty_layer_over_the_defaults(tmp_path: Path, text: str) -> None:
    config = tmp_path / "empty.yaml"
    config.write_text(text, encoding="utf-8")
    plan = tmp_path / "plan.json"
    plan.write_text(plan_json(SUM_STEP), encoding="utf-8")

    assert_exit(invoke("validate", plan, "--config", config), 0)
    listed = invoke("tools", "--config", config, "--json")
    assert_exit(listed, 0)
    assert listed.stdout == invoke("tools", "--json").stdout


def test_every_type_error_in_a_config_is_shown_with_its_key_path_on_one_line(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("run:\n  ttl: x\n  max_llm_calls: y\n  evaluate: maybe\nllm:\n  temperature: hot\n")
    result = invoke("run", "hello", "--config", config, "--quiet")

    assert_exit(result, 2)
    line = one_line(result.stderr)
    for key in ("run.ttl", "run.max_llm_calls", "run.evaluate", "llm.temperature"):
        assert f"at {key}:" in line, line
    assert "more)" not in line


def test_a_config_that_is_not_utf8_text_exits_2_with_one_line(tmp_path: Path) -> None:
    config = tmp_path / "aeon.yaml"
    config.write_bytes(b"\xff\xfe\x00llm: {}")
    result = invoke("run", "hello", "--config", config, "--quiet")

    assert_exit(result, 2)
    assert "not UTF-8" in one_line(result.stderr)


# -- plan files -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("content", [b"\xff\xfe{\x00}", b"\x89PNG\r\n\x1a\n\x00\x00"], ids=["utf16-ish", "png"])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_plan_file_that_is_not_utf8_text_exits_2_with_one_line(tmp_path: Path, command: str, content: bytes) -> None:
    plan = tmp_path / "plan.json"
    plan.write_bytes(content)
    args = ["validate", plan] if command == "validate" else ["run", "add", "--plan", plan, "--quiet"]
    result = invoke(*args, "--config", scripted_config(tmp_path, []))

    assert_exit(result, 2)
    line = one_line(result.stderr)
    assert str(plan) in line and "UTF-8" in line
    assert not log_of(tmp_path).exists()
