"""The `calculator` built-in: arithmetic evaluated by walking Python's AST, never with eval or exec."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable

from aeon.adapters.tools.decorator import tool

Number = int | float

MAX_LENGTH = 500
MAX_DEPTH = 100
MAX_EXPONENT = 1000
MAX_MAGNITUDE = 10**100

_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_SYMBOLS: dict[type[ast.AST], str] = {
    ast.And: "and",
    ast.Or: "or",
    ast.Not: "not",
    ast.Invert: "~",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.MatMult: "@",
}


# bounded work: length, depth, exponent caps; it computes, reads and writes nothing, and its answer is trusted data
@tool(example={"expression": "5 + 10"}, inline=True, pure=True, effect="none", trusted=True)
def calculator(expression: str) -> float:
    """Evaluate an arithmetic expression: numbers, + - * / // % **, unary minus and parentheses.

    Names, function calls, comparisons and logic are rejected; results beyond 1e100 are refused.
    """
    return evaluate(expression)


def evaluate(expression: str) -> Number:
    """The value of `expression`. Raises ValueError naming what is not arithmetic or why it cannot be computed."""
    text = expression.strip()
    if not text:
        raise ValueError("empty expression")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"expression too long: {len(text)} characters (limit {MAX_LENGTH})")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        reason = exc.msg if isinstance(exc, SyntaxError) else type(exc).__name__
        preview = text if len(text) <= 60 else text[:57] + "..."
        raise ValueError(f"not arithmetic: cannot parse {preview!r} ({reason})") from None
    return _eval(tree.body, depth=0)


def _eval(node: ast.AST, *, depth: int) -> Number:
    if depth > MAX_DEPTH:
        raise ValueError(f"expression nested too deeply (more than {MAX_DEPTH} levels)")
    if isinstance(node, ast.Constant):
        return _number(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _checked(_UNARY[type(node.op)](_eval(node.operand, depth=depth + 1)))
    if isinstance(node, ast.BinOp) and (type(node.op) in _BINARY or isinstance(node.op, ast.Pow)):
        # A left operand continues a flat chain (1 + 2 + 3 …), so only the right side counts as nesting; the
        # parser already caps parentheses and the length cap bounds the recursion.
        left = _eval(node.left, depth=depth)
        right = _eval(node.right, depth=depth + 1)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        try:
            return _checked(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise ValueError("division by zero") from None
    raise ValueError(f"not arithmetic: {_describe(node)} is not supported")


def _number(value: object) -> Number:
    # bool is an int subclass and complex is a number, but neither is arithmetic on real numbers here.
    if type(value) is int or type(value) is float:
        return _checked(value)
    if isinstance(value, str):
        return _reject(f"string {value!r}")
    return _reject(f"the constant {value!r}")


def _power(base: Number, exponent: Number) -> Number:
    # Decide from logarithms before computing, so 9**9**9 or 10**100000 fail at once instead of hanging.
    text = f"{_operand(base)}**{_operand(exponent)}"
    if abs(exponent) > MAX_EXPONENT:
        raise ValueError(f"exponent too large: {text} (exponent limit {MAX_EXPONENT})")
    if abs(base) > 1 and exponent > 0 and math.log10(abs(base)) * exponent > math.log10(MAX_MAGNITUDE) + 1:
        raise ValueError(f"result too large: {text} exceeds 1e100")
    try:
        result = operator.pow(base, exponent)
    except ZeroDivisionError:
        raise ValueError("division by zero: 0 raised to a negative power") from None
    except OverflowError:
        raise ValueError(f"result too large: {text} exceeds 1e100") from None
    if isinstance(result, complex):
        raise ValueError(f"result is not a real number: {text}")
    return _checked(result)


def _checked(value: Number) -> Number:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("result is not a finite number")
    # Floats compare with the float 1e100 so that 10.0**100 (a hair above 10**100 in binary) still passes.
    if abs(value) > (float(MAX_MAGNITUDE) if isinstance(value, float) else MAX_MAGNITUDE):
        raise ValueError("result too large: magnitude exceeds 1e100")
    return value


def _operand(value: Number) -> str:
    return f"({value!r})" if value < 0 else repr(value)


def _describe(node: ast.AST) -> str:
    if isinstance(node, ast.BoolOp | ast.UnaryOp | ast.BinOp) and type(node.op) in _SYMBOLS:
        return repr(_SYMBOLS[type(node.op)])
    if isinstance(node, ast.Name):
        return f"the name {node.id!r}"
    if isinstance(node, ast.Call):
        return "a function call"
    if isinstance(node, ast.Attribute):
        return f"attribute access ('.{node.attr}')"
    if isinstance(node, ast.Compare):
        return "a comparison"
    if isinstance(node, ast.Lambda):
        return "lambda"
    if isinstance(node, ast.Subscript):
        return "indexing"
    return f"{type(node).__name__} syntax"


def _reject(what: str) -> Number:
    raise ValueError(f"not arithmetic: {what} is not supported")
