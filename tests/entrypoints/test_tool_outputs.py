"""What a tool returns: checked against its declared output type, and never lost when JSON cannot hold it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import aeon

from cli_harness import assert_exit, invoke, log_of, records, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env", "forget_imports")

TOOLS = '''
from decimal import Decimal
from fractions import Fraction
from typing import Any

from aeon.adapters.tools import tool


class Reading:
    def __str__(self) -> str:
        return "Reading(celsius=21.5)"


@tool
def count_letters(text: str) -> int:
    """Count the letters in a text (wrongly: returns a word)."""
    return "five"


@tool(output_schema={"type": "integer"})
def count_letters_declared(text: str) -> int:
    """Count the letters in a text (wrongly: returns a word), with a declared output schema."""
    return "five"


@tool
def count_words(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())


@tool
def constants() -> dict[str, Any]:
    """Exact constants."""
    return {"pi": Decimal("3.14159265358979323846264338327950288"), "ratio": Fraction(22, 7), "n": 3}


@tool
def sensor() -> Any:
    """A reading from a sensor library."""
    return {"reading": Reading()}


@tool
def half(x: int) -> float:
    """Half of x, exactly."""
    return Decimal(x) / 2


@tool
def power_of_ten(exponent: int) -> int:
    """10 to the power of `exponent`."""
    return 10**exponent


@tool
def whole_half(x: int) -> int:
    """Half of x, declared as an integer."""
    return Decimal(x) / 2
'''


def run_plan(tmp_path: Path, *steps: dict[str, Any], check: str | None = None, exit_code: int = 0) -> dict[str, Any]:
    """`aeon run --json` of a plan of `steps`; `check` is tools.output_check. The document, with the stderr."""
    (tmp_path / "outputs_tools.py").write_text(TOOLS, encoding="utf-8")
    tools: dict[str, Any] = {"modules": ["outputs_tools"]} | ({"output_check": check} if check else {})
    config = scripted_config(tmp_path, [], tools=tools)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"goal": "try the tools", "steps": list(steps)}), encoding="utf-8")
    result = invoke("run", "try the tools", "--config", config, "--plan", plan, "--json")
    assert_exit(result, exit_code)
    doc: dict[str, Any] = json.loads(result.stdout)
    doc["stderr"] = result.stderr
    return doc


def step(step_id: str, tool: str, **args: Any) -> dict[str, Any]:
    return {"step_id": step_id, "description": f"call {tool}", "tool": tool, "args": args}


def tool_call(tmp_path: Path, step_id: str) -> dict[str, Any]:
    calls = [r for r in records(log_of(tmp_path)) if r["event"] == "tool_call" and r["step_id"] == step_id]
    assert len(calls) == 1
    return calls[0]


# -- 14: the output type: a return annotation is checked with a warning, a declared schema is enforced ---------------

MISMATCH = "output does not match its annotated type integer: returned string 'five'"


def test_a_tool_returning_a_string_where_its_annotation_says_int_completes_with_a_warning_everywhere(
    tmp_path: Path,
) -> None:
    doc = run_plan(tmp_path, step("s1", "count_letters", text="a b"), step("s2", "count_words", text="a b"))

    s1 = doc["outputs"]["s1"]
    assert (s1["status"], s1["output"], s1["errors"]) == ("complete", "five", [])  # the effect happened: kept
    (note,) = s1["notes"]
    assert note.startswith(MISMATCH) and "tools.output_check: fail" in note
    assert tool_call(tmp_path, "s1")["notes"] == [note]  # the record
    warning = f"step s1: tool 'count_letters' {note}"
    assert warning in doc["warnings"]  # the result
    assert any(line.endswith(warning) for line in doc["stderr"].splitlines())  # the CLI line
    assert doc["outputs"]["s2"] == {"status": "complete", "output": 2, "mode": "tool", "errors": []}


def test_output_check_fail_fails_the_step_naming_the_tool_the_type_and_what_came_back(tmp_path: Path) -> None:
    doc = run_plan(
        tmp_path, step("s1", "count_letters", text="a b"), step("s2", "count_words", text="a b"), check="fail"
    )

    s1 = doc["outputs"]["s1"]
    assert s1["status"] == "failed"
    assert s1["errors"] == [f"tool 'count_letters' failed: {MISMATCH}"]
    assert doc["outputs"]["s2"]["status"] == "complete"
    assert tool_call(tmp_path, "s1")["output"] == "five"  # what came back stays in the log


def test_output_check_off_does_not_check_a_return_annotation(tmp_path: Path) -> None:
    doc = run_plan(tmp_path, step("s1", "count_letters", text="a b"), check="off")

    s1 = doc["outputs"]["s1"]
    assert (s1["status"], s1["output"], s1.get("notes", [])) == ("complete", "five", [])
    assert not [w for w in doc["warnings"] if "count_letters" in w]


@pytest.mark.parametrize("check", ["warn", "off"])
def test_a_declared_output_schema_is_enforced_whatever_output_check_says(tmp_path: Path, check: str) -> None:
    doc = run_plan(tmp_path, step("s1", "count_letters_declared", text="a b"), check=check, exit_code=4)

    s1 = doc["outputs"]["s1"]
    assert s1["status"] == "failed" and doc["status"] == "failed"  # its only step failed: so did the run
    assert s1["errors"] == [
        "tool 'count_letters_declared' failed: output does not match its declared type integer: returned string 'five'"
    ]


# -- 15: values JSON cannot encode are kept as text, flagged --------------------------------------------------------


def test_arbitrary_precision_numbers_are_recorded_as_exact_text_and_flagged(tmp_path: Path) -> None:
    doc = run_plan(tmp_path, step("s1", "constants"))

    s1 = doc["outputs"]["s1"]
    assert s1["status"] == "complete"
    assert s1["output"] == {"pi": "3.14159265358979323846264338327950288", "ratio": "22/7", "n": 3}
    assert any("pi" in note and "Decimal" in note for note in s1["notes"])
    assert any("ratio" in note and "Fraction" in note for note in s1["notes"])
    assert tool_call(tmp_path, "s1")["notes"] == s1["notes"]


def test_an_object_json_cannot_encode_is_recorded_as_its_text_and_the_step_completes(tmp_path: Path) -> None:
    doc = run_plan(tmp_path, step("s1", "sensor"))

    s1 = doc["outputs"]["s1"]
    assert (s1["status"], s1["output"]) == ("complete", {"reading": "Reading(celsius=21.5)"})
    assert any("Reading" in note for note in s1["notes"])
    assert tool_call(tmp_path, "s1")["notes"] == s1["notes"]


def test_an_exact_number_passes_a_declared_number_but_not_a_declared_integer_it_is_not(tmp_path: Path) -> None:
    steps = (step("s1", "half", x=5), step("s2", "whole_half", x=5), step("s3", "whole_half", x=4))
    doc = run_plan(tmp_path, *steps, check="fail")

    assert (doc["outputs"]["s1"]["status"], doc["outputs"]["s1"]["output"]) == ("complete", "2.5")
    assert doc["outputs"]["s2"]["status"] == "failed"
    assert "whole_half" in doc["outputs"]["s2"]["errors"][0] and "integer" in doc["outputs"]["s2"]["errors"][0]
    assert (doc["outputs"]["s3"]["status"], doc["outputs"]["s3"]["output"]) == ("complete", "2")


# -- integers past Python's limit for numbers as text (4,300 digits) --------------------------------------------------


def test_an_int_past_pythons_digit_limit_is_kept_as_its_digits_with_a_note_and_the_run_completes(
    tmp_path: Path,
) -> None:
    doc = run_plan(tmp_path, step("s1", "power_of_ten", exponent=5000), check="fail")

    s1 = doc["outputs"]["s1"]
    assert (s1["status"], s1["output"]) == ("complete", "1" + "0" * 5000)  # passes its declared int: a whole number
    assert s1["notes"] == [
        "output: int recorded as text (it has more digits than Python writes as a number: sys.get_int_max_str_digits())"
    ]
    assert tool_call(tmp_path, "s1")["output"] == s1["output"]
    assert [r["status"] for r in records(log_of(tmp_path)) if r["event"] == "run_end"] == ["completed"]


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_plan_file_with_an_int_past_pythons_digit_limit_is_an_input_error_naming_its_line(
    tmp_path: Path, suffix: str
) -> None:
    (tmp_path / "outputs_tools.py").write_text(TOOLS, encoding="utf-8")
    config = scripted_config(tmp_path, [], tools={"modules": ["outputs_tools"]})
    text = json.dumps({"goal": "g", "steps": [step("s1", "power_of_ten", exponent=0)]}, indent=1)
    plan = tmp_path / f"plan{suffix}"
    plan.write_text(text.replace('"exponent": 0', '"exponent": ' + "7" * 5000), encoding="utf-8")
    result = invoke("run", "try the tools", "--config", config, "--plan", plan, "--json")
    assert_exit(result, 2)
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "AEON.INPUT"
    assert f"plan{suffix}:9: a number of 5000 digits is longer than the 4300 digits Python reads" in error["message"]


def test_a_plan_given_as_data_with_an_int_past_pythons_digit_limit_is_an_input_error_naming_the_argument(
    tmp_path: Path,
) -> None:
    (tmp_path / "outputs_tools.py").write_text(TOOLS, encoding="utf-8")
    config = scripted_config(tmp_path, [], tools={"modules": ["outputs_tools"]})
    plan = {"goal": "g", "steps": [step("s1", "power_of_ten", exponent=[0, {"n": 10**5000}])]}
    with pytest.raises(aeon.InputError, match=r"step s1: args\.exponent\[1\]\.n is an integer of more than the 4300"):
        aeon.run("try the tools", plan=plan, config=config, durable=False)
