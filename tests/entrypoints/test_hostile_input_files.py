"""Hostile plans, configs, scripts, batch files and requests: exit 2 with one line naming the file, the line and the
rule, before any LLM call or log write (issue 18, items 1-5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aeon.adapters.documents import read_requests
from aeon.application.errors import InputError

from cli_harness import SUM_STEP, assert_exit, invoke, log_of, one_line, plan_json, scripted_config

pytestmark = pytest.mark.usefixtures("isolated_env")

# Nine levels of ten, as a plan: 10⁹ strings once expanded, from ten lines.
ALIAS_BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{b}: &{b} [{', '.join([f'*{a}'] * 10)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True))
    + "goal: *i\nsteps: [{step_id: s1, description: d, tool: calculator, args: {expression: '1+1', x: *i}}]\n"
)
STEP_YAML = "- step_id: s1\n  description: Add 5 and 10\n  tool: calculator\n  args: {expression: '5 + 10'}\n"
DEEP_JSON_ARGS = plan_json({**SUM_STEP, "args": {"expression": "5 + 10", "x": "<deep>"}}).replace(
    '"<deep>"', "[" * 200_000 + "]" * 200_000
)
HOSTILE_PLANS = {
    "alias-bomb.yaml": (ALIAS_BOMB, r":1: anchor &a refused: anchors and aliases are not accepted"),
    "deep.yaml": ("goal: g\nsteps:\n" + STEP_YAML + "  deep: " + "[" * 5000 + "]" * 5000 + "\n", ":7: nested deeper"),
    "deep-block.yaml": ("goal: g\nsteps:\n" + STEP_YAML + "  deep:\n    " + "- " * 5000 + "x\n", ":8: nested deeper"),
    "deep.json": (DEEP_JSON_ARGS, ":1: nested deeper than 100 levels"),
    "dup.json": (
        '{"goal": "g",\n "steps": [' + json.dumps(SUM_STEP) + '],\n "steps": []}',
        ":3: duplicate key 'steps' (first at line 2)",
    ),
    "dup.yaml": ("goal: g\nsteps:\n" + STEP_YAML + "steps: []\n", ":7: duplicate key 'steps' (first at line 2)"),
    "dup-args.yaml": ("goal: g\nsteps:\n" + STEP_YAML + "  args: {}\n", ":7: duplicate key 'args' (first at line 6)"),
}


@pytest.mark.parametrize("name", list(HOSTILE_PLANS))
@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_hostile_plan_exits_2_naming_the_file_line_and_rule_before_any_llm_call(
    tmp_path: Path, command: str, name: str
) -> None:
    text, expected = HOSTILE_PLANS[name]
    plan = tmp_path / name
    plan.write_text(text, encoding="utf-8")
    config = scripted_config(tmp_path, [])  # no answer to give: any LLM call would fail the run instead
    args = ["validate", plan] if command == "validate" else ["run", "add", "--plan", plan, "--quiet"]
    result = invoke(*args, "--config", config)

    assert_exit(result, 2)
    line = one_line(result.stderr)
    assert line.startswith(f"aeon: plan {plan}"), line
    assert expected in line, line
    assert "RecursionError" not in line and "INTERNAL" not in line
    assert not log_of(tmp_path).exists()


def test_a_plan_over_1_mib_exits_2_naming_the_cap(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(plan_json({**SUM_STEP, "description": "x" * (1 << 20)}), encoding="utf-8")
    result = invoke("run", "add", "--plan", plan, "--config", scripted_config(tmp_path, []), "--quiet", "--json")

    assert_exit(result, 2)
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "AEON.INPUT"
    assert error["message"] == f"plan {plan} is larger than 1 MiB, the most Aeon reads from a plan"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("defaults: &d {ttl: 2}\nrun: *d\n", ":1: anchor &d refused"),
        ("run:\n  ttl: 2\nrun:\n  ttl: 9\n", ":3: duplicate key 'run' (first at line 1)"),
        ("run:\n  ttl: 2\n  ttl: 9\n", ":3: duplicate key 'ttl' (first at line 2)"),
        ("run: {ttl: " + "[" * 5000 + "]" * 5000 + "}\n", ":1: nested deeper than 100 levels"),
    ],
    ids=["alias", "duplicate-section", "duplicate-key", "deep"],
)
def test_a_hostile_config_exits_2_naming_the_file_and_line(tmp_path: Path, text: str, expected: str) -> None:
    config = tmp_path / "aeon.yaml"
    config.write_text(text, encoding="utf-8")
    result = invoke("run", "hello", "--config", config, "--quiet", "--json")

    assert_exit(result, 2)
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "AEON.CONFIG"
    assert error["message"].startswith(f"config file {config}{expected}"), error


def test_an_llm_script_with_aliases_exits_2_naming_the_script(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, [])
    script = tmp_path / "script.yaml"
    script.write_text("answer: &a '{}'\nresponses: [*a, *a]\n", encoding="utf-8")
    result = invoke("run", "hello", "--config", config, "--quiet")

    assert_exit(result, 2)
    assert one_line(result.stderr) == (
        f"aeon: LLM script {script}:1: anchor &a refused: anchors and aliases are not accepted"
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"request": "a", "request": "b"}', ":2: duplicate key 'request' (first at line 2)"),
        ('{"request": "a", "x": ' + "[" * 200_000 + "]" * 200_000 + "}", ":2: nested deeper than 100 levels"),
        ('{"request": "\\udc80"}', " holds an unpaired surrogate escape"),
    ],
    ids=["duplicate", "deep", "surrogate"],
)
def test_a_hostile_batch_line_is_refused_naming_its_line(tmp_path: Path, line: str, expected: str) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_text('{"request": "add 1 and 2"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_requests(batch)
    assert str(caught.value).startswith(str(batch)), caught.value
    assert expected in str(caught.value)


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_request_that_is_not_utf8_exits_2_before_the_run_starts(tmp_path: Path, as_json: bool) -> None:
    config = scripted_config(tmp_path, [plan_json(SUM_STEP)])
    request = "add 5 and 10 \udcff"  # what Python makes of `aeon run $'add 5 and 10 \xff'`
    result = invoke("run", request, "--config", config, *(["--json"] if as_json else []))

    assert_exit(result, 2)
    message = json.loads(result.stdout)["error"]["message"] if as_json else one_line(result.stderr)
    assert "the request is not UTF-8 text (character 14" in message
    assert not log_of(tmp_path).exists()


@pytest.mark.parametrize(
    ("step_id", "shown"),
    [
        ("s1\u202egnp.exe", "U+202E (a bidi control)"),
        ("s\u200b1", "U+200B (a zero-width character)"),
        ("s1\x00", "U+0000 (not printable)"),
        ("s\u20661", "U+2066 (a bidi control)"),
    ],
    ids=["rlo-override", "zero-width-space", "nul", "isolate"],
)
def test_a_step_id_with_hidden_characters_is_reported_by_validate_and_refused_by_run(
    tmp_path: Path, step_id: str, shown: str
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(plan_json({**SUM_STEP, "step_id": step_id}), encoding="utf-8")
    config = scripted_config(tmp_path, [])

    checked = invoke("validate", plan, "--config", config)
    assert_exit(checked, 1)
    assert f"step {step_id!r}: step_id {step_id!r} holds {shown}" in checked.stdout
    assert step_id not in checked.stdout  # escaped wherever it is printed: the terminal never gets the character

    ran = invoke("run", "add", "--plan", plan, "--config", config, "--quiet")
    assert_exit(ran, 2)
    assert shown in one_line(ran.stderr) and step_id not in ran.stderr
    assert not log_of(tmp_path).exists()
