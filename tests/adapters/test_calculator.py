"""The calculator evaluates arithmetic by walking the AST and rejects everything else with a clear message."""

from __future__ import annotations

import operator
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aeon.adapters.tools.calculator import MAX_LENGTH, calculator, evaluate


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("5 + 10", 15),
        ("2 + 3 * 4", 14),
        ("(2 + 3) * 4", 20),
        ("10 - 4 - 3", 3),
        ("2 ** 3 ** 2", 512),
        ("-3 ** 2", -9),
        ("(-3) ** 2", 9),
        ("-(2 + 3)", -5),
        ("+7", 7),
        ("--4", 4),
        ("7 / 2", 3.5),
        ("7 // 2", 3),
        ("-7 // 2", -4),
        ("7 % 3", 1),
        ("1.5 * 4", 6.0),
        ("0.1 + 0.2", 0.1 + 0.2),
        ("2 ** -1", 0.5),
        ("2 ** 0.5", 2**0.5),
        ("  ( 1 + 2 )  ", 3),
        ("10 ** 100", 10**100),
    ],
)
def test_arithmetic_follows_python_precedence_and_types(expression: str, expected: float) -> None:
    result = evaluate(expression)
    assert result == expected
    assert type(result) is type(expected)


def test_tool_function_returns_the_evaluated_number() -> None:
    assert calculator("5 + 10") == 15


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("5 and 10", "not arithmetic: 'and' is not supported"),
        ("5 or 10", "not arithmetic: 'or' is not supported"),
        ("not 5", "not arithmetic: 'not' is not supported"),
        ("~5", "not arithmetic: '~' is not supported"),
        ("5 & 3", "not arithmetic: '&' is not supported"),
        ("1 << 100", "not arithmetic: '<<' is not supported"),
        ("x + 1", "not arithmetic: the name 'x' is not supported"),
        ("abs(-1)", "not arithmetic: a function call is not supported"),
        ("__import__('os').system('true')", "not arithmetic: a function call is not supported"),
        ("(1).__class__", "not arithmetic: attribute access ('.__class__') is not supported"),
        ("'a' * 3", "not arithmetic: string 'a' is not supported"),
        ("1 < 2", "not arithmetic: a comparison is not supported"),
        ("lambda: 1", "not arithmetic: lambda is not supported"),
        ("[1, 2][0]", "not arithmetic: indexing is not supported"),
        ("True + 1", "not arithmetic: the constant True is not supported"),
        ("2j", "not arithmetic: the constant 2j is not supported"),
        ("1 if 2 else 3", "not arithmetic: IfExp syntax is not supported"),
        ("1 +", "not arithmetic: cannot parse '1 +' (invalid syntax)"),
        ("import os", "not arithmetic: cannot parse 'import os' (invalid syntax)"),
        ("", "empty expression"),
    ],
)
def test_anything_but_arithmetic_is_rejected_with_a_clear_message(expression: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        evaluate(expression)
    assert str(caught.value) == message


@pytest.mark.parametrize("expression", ["1 / 0", "5 // 0", "5 % 0", "1.0 / (2 - 2)"])
def test_division_by_zero_is_a_clear_error(expression: str) -> None:
    with pytest.raises(ValueError, match=r"^division by zero$"):
        evaluate(expression)


def test_zero_to_a_negative_power_is_division_by_zero() -> None:
    with pytest.raises(ValueError, match="division by zero"):
        evaluate("0 ** -1")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("9**9**9", "exponent too large: 9\\*\\*387420489"),
        ("10**100000", "exponent too large: 10\\*\\*100000"),
        ("2 ** 400", "result too large: 2\\*\\*400 exceeds 1e100"),
        ("(-2) ** 999", "result too large: \\(-2\\)\\*\\*999 exceeds 1e100"),
        ("10.0 ** 200", "result too large"),
        ("1e308 * 10", "result too large"),
        ("10**60 * 10**60", "result too large: magnitude exceeds 1e100"),
        ("1" + "0" * 101, "result too large"),
        ("1e999", "result is not a finite number"),
        ("(-8) ** (1 / 3)", "result is not a real number: \\(-8\\)\\*\\*0.333"),
    ],
)
def test_huge_or_non_real_results_are_refused_quickly(expression: str, message: str) -> None:
    started = time.perf_counter()
    with pytest.raises(ValueError, match=message):
        evaluate(expression)
    assert time.perf_counter() - started < 0.5


def test_long_expressions_are_refused_before_parsing() -> None:
    with pytest.raises(ValueError, match=f"expression too long: {MAX_LENGTH + 1} characters"):
        evaluate("1" * (MAX_LENGTH + 1))


def test_deep_nesting_is_refused_but_long_flat_sums_are_fine() -> None:
    with pytest.raises(ValueError, match="nested too deeply"):
        evaluate("-" * 150 + "1")
    with pytest.raises(ValueError, match="too many nested parentheses"):
        evaluate("(" * 220 + "1" + ")" * 220)
    assert evaluate("+".join(["1"] * 200)) == 200


_OPS: dict[str, Callable[[int, int], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
}


@st.composite
def arithmetic(draw: st.DrawFn, depth: int = 3) -> tuple[str, float]:
    """A fully parenthesised expression over small ints, with the value Python arithmetic gives it."""
    if depth == 0 or draw(st.booleans()):
        n = draw(st.integers(min_value=-20, max_value=20))
        return (f"({n})" if n < 0 else str(n)), n
    left_text, left = draw(arithmetic(depth - 1))
    right_text, right = draw(arithmetic(depth - 1))
    symbol = draw(st.sampled_from(sorted(_OPS)))
    if symbol in {"/", "//", "%"} and right == 0:
        symbol = "+"
    return f"({left_text} {symbol} {right_text})", _OPS[symbol](left, right)  # type: ignore[arg-type]


@settings(max_examples=300)
@given(arithmetic())
def test_calculator_agrees_with_python_arithmetic(case: tuple[str, float]) -> None:
    text, expected = case
    assert evaluate(text) == expected


@settings(max_examples=200)
@given(st.integers(-30, 30), st.integers(-30, 30), st.integers(1, 30), st.integers(0, 3))
def test_precedence_without_parentheses_matches_python(a: int, b: int, c: int, p: int) -> None:
    assert evaluate(f"{a} + {b} * {c} - {a} // {c} % {c} + {c} ** {p}") == a + b * c - a // c % c + c**p
