"""`${VAR:default}` markers are replaced in parsed values, never in YAML text: an environment value is one string
(converted to the setting's type by the schema), cannot add or override a key, and a value that does not fit is one
error naming the variable, without its value when the name is secret-like."""

from __future__ import annotations

from pathlib import Path

import pytest

from aeon.application.errors import ConfigurationError
from aeon.entrypoints.config.layers import load_settings

from cli_harness import CONFIG_DIR, REQUEST, assert_exit, invoke, one_line

pytestmark = pytest.mark.usefixtures("isolated_env")

KEY = "sk-test-not-a-real-key-1234"
# A model name that, pasted into the YAML text, would close the quoted value and add a key pointing elsewhere.
INJECTION = 'x"\n  base_url: "http://evil.example/v1'
OPENAI = "https://api.openai.com/v1"


def _config(tmp_path: Path, text: str) -> Path:
    config = tmp_path / "aeon.yaml"
    config.write_text(text, encoding="utf-8")
    return config


@pytest.mark.parametrize("config", [None, CONFIG_DIR / "openai.yaml"], ids=["base.yaml", "openai.yaml"])
def test_a_model_name_holding_yaml_cannot_move_the_endpoint(monkeypatch: pytest.MonkeyPatch, config: Path) -> None:
    monkeypatch.setenv("AEON_LLM_ADAPTER", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("AEON_LLM_MODEL", INJECTION)

    settings = load_settings(config)

    assert settings.llm.base_url == OPENAI
    assert settings.llm.model == INJECTION


def test_a_value_that_is_not_yaml_is_taken_as_text_not_reported_as_a_broken_base_yaml(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AEON_LLM_MODEL", "unbalanced: [\"{ ' ${OPENAI_API_KEY}")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    assert load_settings(None).llm.model == "unbalanced: [\"{ ' ${OPENAI_API_KEY}"  # not parsed, not expanded


def test_a_number_from_the_environment_is_converted_by_the_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path, 'run:\n  max_llm_calls: "${AEON_TEST_CALLS:30}"\n  max_seconds: ${AEON_TEST_SECS:}\n')
    monkeypatch.setenv("AEON_TEST_CALLS", "12")

    settings = load_settings(config)

    assert settings.run.max_llm_calls == 12
    assert settings.run.max_seconds is None  # an empty value is no value, as an empty YAML value is


def test_a_non_numeric_value_for_a_number_is_one_error_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path, 'run:\n  max_llm_calls: "${AEON_TEST_CALLS:30}"\n')
    monkeypatch.setenv("AEON_TEST_CALLS", "lots\nof")

    result = invoke("run", REQUEST, "--config", config)

    assert_exit(result, 2)
    line = one_line(result.stderr)
    assert "at run.max_llm_calls" in line and "AEON_TEST_CALLS='lots\\nof'" in line


def test_a_secret_named_variables_value_never_appears_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path, 'run:\n  max_llm_calls: "${AEON_TEST_API_TOKEN}"\n')
    monkeypatch.setenv("AEON_TEST_API_TOKEN", "hunter2-sekrit")

    with pytest.raises(ConfigurationError) as caught:
        load_settings(config)
    result = invoke("run", REQUEST, "--config", config)

    assert "AEON_TEST_API_TOKEN" in str(caught.value) and "value not shown" in str(caught.value)
    assert_exit(result, 2)
    assert "hunter2" not in str(caught.value) + repr(caught.value.__cause__) + result.stdout + result.stderr


def test_a_key_holding_a_newline_is_an_error_not_a_setting(tmp_path: Path) -> None:
    config = _config(tmp_path, 'prices:\n  "gpt-x\\n  evil": {input: 1, output: 1}\n')

    with pytest.raises(ConfigurationError, match=r"key 'gpt-x\\n  evil' at prices holds a control character"):
        load_settings(config)


def test_markers_in_comments_are_not_read(tmp_path: Path) -> None:
    config = _config(tmp_path, "# set ${AEON_TEST_NOT_SET} to change it\nrun:\n  ttl: 2\n")

    assert load_settings(config).run.ttl == 2
