"""A tool's output against its output schema: declared (an error when it does not fit) or derived from the Python
return annotation (what tools.output_check makes it), exact-text numbers checked as the numbers they write out."""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from aeon.application.schemas import clip, json_kind, preview, schema_problems
from aeon.domain.tools import OutputCheck, ToolSpec


def output_problem(spec: ToolSpec, output: Any, *, numbers: Sequence[Sequence[str | int]] = ()) -> str | None:
    """Why `output` does not match the tool's declared output_schema, in one line naming both; None if it does.

    `numbers` are the paths of numbers the output holds as exact text (a Decimal, a Fraction): text passes where the
    schema accepts a string, and where it asks for a number each is checked as the number it writes out.
    """
    found = schema_problems(output, spec.output_schema)
    if found and numbers:  # a mismatch at an exact-text number stands only if the number mismatches too
        exact = {"/".join(str(p) for p in path) or "(root)" for path in numbers}
        try:
            still = {path for path, _ in schema_problems(_as_numbers(output, numbers), spec.output_schema)}
        except ValueError:  # a message quoting an int past Python's limit for numbers as text: the text stands
            still = exact
        found = [(path, message) for path, message in found if path not in exact or path in still]
    if not found:
        return None
    declared = spec.output_schema.get("type") or clip(json.dumps(spec.output_schema), 80)
    kind = "annotated" if spec.output_inferred else "declared"
    problem = f"output does not match its {kind} type {declared}: returned {json_kind(output)} {preview(output)}"
    nested = [f"at {path}: {message}" for path, message in found if path != "(root)"]
    return problem + (f" ({'; '.join(nested)})" if nested else "")


def output_verdict(
    spec: ToolSpec, output: Any, *, check: OutputCheck, numbers: Sequence[Sequence[str | int]] = ()
) -> tuple[str | None, str | None]:
    """(error, warning) for `output` against the tool's output_schema: a declared schema's mismatch is an error; one
    derived from a Python return annotation is what `check` (tools.output_check) makes it: a warning that keeps the
    output (warn), an error (fail), or nothing at all (off, which skips the check)."""
    if spec.output_inferred and check == "off":
        return None, None
    problem = output_problem(spec, output, numbers=numbers)
    if problem is None or not spec.output_inferred or check == "fail":
        return problem, None
    return None, f"{problem}; kept as returned (tools.output_check: fail would fail the step)"


def _as_numbers(output: Any, paths: Sequence[Sequence[str | int]]) -> Any:
    """A copy of `output` with the exact-text numbers at `paths` as JSON numbers, for checking only."""
    copy = json.loads(json.dumps(output))
    for path in paths:
        parent, key = (None, None) if not path else (_at(copy, path[:-1]), path[-1])
        number = _number(str(copy if parent is None else parent[key]))
        if number is None:
            continue
        if parent is None:
            return number
        parent[key] = number
    return copy


def _number(text: str) -> int | float | None:
    """The number an exact text ("2.5", "22/7", "1e400", 5,000 digits) writes out, as JSON would hold it; None when
    it is none (nan, inf) or a float cannot hold it. Parsed by decimal, which has no digit limit."""
    try:
        top, _, bottom = text.partition("/")
        exact = Fraction(Decimal(top)) / (Fraction(Decimal(bottom)) if bottom else 1)
        return int(exact) if exact.denominator == 1 else float(exact)
    except (ArithmeticError, ValueError):  # decimal's InvalidOperation, ZeroDivisionError, OverflowError
        return None


def _at(value: Any, path: Sequence[str | int]) -> Any:
    for key in path:
        value = value[key]
    return value
