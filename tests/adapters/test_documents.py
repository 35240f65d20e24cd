"""Untrusted JSON/YAML files: aliases, deep nesting, duplicate keys and oversized files are refused by line, at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aeon.adapters.documents import MAX_DEPTH, parse_json, parse_yaml, read_document, read_text
from aeon.application.errors import InputError

# Nine levels of ten: 10⁹ strings once expanded (the file is ten lines).
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 10)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_yaml_aliases_and_anchors_are_refused_naming_the_line() -> None:
    with pytest.raises(InputError, match=r"^plan p\.yaml:1: anchor &a refused: anchors and aliases"):
        parse_yaml(ALIAS_BOMB, source="plan p.yaml")
    with pytest.raises(InputError, match=r"^s:2: alias \*base refused"):
        parse_yaml("x: 1\ny: *base\n", source="s")  # an alias to an unknown anchor is still an alias


@pytest.mark.parametrize(
    ("deep", "line"),
    [
        ("[" * 5000 + "]" * 5000, 2),
        ("\n  " + "- " * 5000 + "x", 3),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), 2),
    ],
    ids=["flow-5000", "block-5000", "one-over-the-limit"],
)
def test_deep_yaml_is_refused_naming_the_limit_never_a_recursion_error(deep: str, line: int) -> None:
    with pytest.raises(InputError, match=rf"^plan p\.yaml:{line}: nested deeper than {MAX_DEPTH} levels$"):
        parse_yaml(f"goal: g\nargs: {deep}\n", source="plan p.yaml")


def test_nesting_up_to_the_limit_is_read() -> None:
    ok = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert parse_yaml(f"a: {ok}\n", source="s") is not None
    assert parse_json(f'{{"a": {ok}}}', source="s") is not None


def test_deep_json_is_refused_naming_the_line_and_the_limit() -> None:
    text = '{"goal": "g",\n "args": ' + "[" * 200_000 + "]" * 200_000 + "}"
    with pytest.raises(InputError, match=rf"^plan p\.json:2: nested deeper than {MAX_DEPTH} levels$"):
        parse_json(text, source="plan p.json")


def test_brackets_inside_json_strings_are_not_nesting() -> None:
    text = json.dumps({"a": "[" * 500, "b": '\\"[{' * 300})
    assert parse_json(text, source="s") == json.loads(text)


@pytest.mark.parametrize(
    ("text", "key", "line", "first"),
    [
        ('{"goal": "g",\n "steps": [],\n "steps": [1]}', "steps", 3, 2),
        ('{"steps": [{"args": {"x": 1,\n "y": 2}},\n {"args": {"x": 1, "x": 2}}]}', "x", 3, 3),
        ('{"a": {"k": 1}, "b": {"k": 2},\n "a": 0}', "a", 2, 1),
        ('{"s": "\\"k\\": 1", "k": 1,\n "k\\u0000": 1, "k": 2}', "k", 2, 1),
    ],
    ids=["top-level", "nested-in-args", "same-key-in-sibling-objects-is-fine", "escaped-and-lookalike-keys"],
)
def test_duplicate_json_keys_are_refused_naming_the_key_and_both_lines(
    text: str, key: str, line: int, first: int
) -> None:
    with pytest.raises(InputError, match=rf"^p\.json:{line}: duplicate key '{key}' \(first at line {first}\)$"):
        parse_json(text, source="p.json")


def test_duplicate_yaml_keys_are_refused_naming_the_key_and_both_lines() -> None:
    with pytest.raises(InputError, match=r"^c:4: duplicate key 'steps' \(first at line 2\)$"):
        parse_yaml("goal: g\nsteps:\n- a\nsteps:\n- b\n", source="c")
    with pytest.raises(InputError, match=r"^c:1: duplicate key 1 \(first at line 1\)$"):
        parse_yaml("{1: a, 0x1: b}", source="c")  # the same key, spelled twice


def test_a_jsonl_line_is_reported_with_its_line_in_the_file() -> None:
    with pytest.raises(InputError, match=r"^b\.jsonl:7: duplicate key 'request' \(first at line 7\)$"):
        parse_json('{"request": "a", "request": "b"}', source="b.jsonl", first_line=7)


@pytest.mark.parametrize(
    ("text", "why"),
    [('{"a": "\\ud800"}', "unpaired surrogate"), ('a: "\\udfff"\n', "invalid Unicode character escape")],
    ids=["json", "yaml"],
)
def test_unpaired_surrogate_escapes_are_refused_as_not_text(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / ("p.json" if text.startswith("{") else "p.yaml")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=why):  # no request body or log line could hold it later
        read_document(path, what="plan")


def test_paired_surrogate_escapes_are_text() -> None:
    assert parse_json('{"a": "\\ud83d\\ude00"}', source="s") == {"a": "\U0001f600"}


def test_a_file_over_the_cap_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    big = tmp_path / "plan.json"
    big.write_text(" " * 1001 + "{}", encoding="utf-8")
    with pytest.raises(InputError, match=r"plan .*plan\.json is larger than 1000 bytes"):
        read_document(big, what="plan", max_bytes=1000)
    with pytest.raises(InputError, match=r"larger than 1 MiB"):
        read_text(Path("/dev/zero"), what="plan")  # endless: read only up to the cap


def test_json_and_yaml_files_read_as_before(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text('{"goal": "g", "steps": [{"step_id": "s1"}]}', encoding="utf-8")
    (tmp_path / "p.yaml").write_text("goal: g\nsteps:\n- step_id: s1\n  when: 2024-01-01\n", encoding="utf-8")
    assert read_document(tmp_path / "p.json", what="plan") == {"goal": "g", "steps": [{"step_id": "s1"}]}
    assert read_document(tmp_path / "p.yaml", what="plan")["steps"][0]["step_id"] == "s1"
    assert parse_yaml("", source="s") is None
    assert parse_yaml("base: {a: 1}\nmerged: {<<: {a: 2}, b: 3}\n", source="s")["merged"] == {"a": 2, "b": 3}
