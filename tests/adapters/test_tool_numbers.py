"""Numbers a tool returns keep every digit they hold: as JSON numbers where JSON holds them exactly, else as text
read from the value itself (never from a library's global print precision), noted; an int too long for Python to
write as text is kept as its digits."""

from __future__ import annotations

import asyncio
import decimal
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest

from aeon.adapters.tools import ToolRegistry
from aeon.domain.tools import ToolResult, ToolSpec


def returned(value: Any) -> ToolResult:
    """What the registry makes of a tool returning `value`."""
    registry = ToolRegistry()
    spec = ToolSpec(name="t", description="d", input_schema={"type": "object"}, output_schema={})
    registry.register(spec, lambda: value() if callable(value) else value)
    return asyncio.run(registry.invoke("t", {}))


@pytest.fixture
def low_mp_precision() -> Iterator[None]:
    """mpmath's global precision lowered, as a tool may leave it (mp.dps is process-wide)."""
    before = mpmath.mp.dps
    mpmath.mp.dps = 3
    yield
    mpmath.mp.dps = before


def test_an_mpf_computed_at_50_digits_keeps_them_though_the_global_precision_is_now_3(low_mp_precision: None) -> None:
    with mpmath.workdps(50):
        third = mpmath.mpf(1) / 3
    result = returned(third)
    assert isinstance(result.output, str) and result.output.startswith("0." + "3" * 50)
    with mpmath.workdps(50):
        assert mpmath.mpf(result.output) == third  # read at its own precision, it is the very value
    assert [(c.type, c.number) for c in result.converted] == [("mpf", True)]


def test_an_mpf_computed_under_a_lowered_precision_is_written_with_every_digit_it_holds() -> None:
    def tool() -> Any:
        mpmath.mp.dps = 2  # the tool lowers the global precision and leaves it so
        try:
            return {"root": mpmath.sqrt(mpmath.mpf("1.7"))}
        finally:
            mpmath.mp.dps = 15

    result = returned(tool)
    assert result.output == {"root": "1.302734375"}  # its exact binary value, where str() at dps 2 says "1.3"


def test_an_mpc_keeps_both_parts(low_mp_precision: None) -> None:
    with mpmath.workdps(30):
        z = mpmath.mpc(1, -2) / 3
    output = returned(z).output
    assert output.startswith("(0.333333333333333333333333333") and "-0.666666666666666666666666666" in output


def test_a_decimal_keeps_its_digits_whatever_the_decimal_context_says() -> None:
    exact = Decimal("3.14159265358979323846264338327950288")
    with decimal.localcontext(prec=4):
        result = returned(exact)
    assert result.output == "3.14159265358979323846264338327950288"
    assert result.converted[0].number


def test_a_fraction_is_written_as_its_ratio_even_past_pythons_digit_limit() -> None:
    assert returned(Fraction(22, 7)).output == "22/7"
    huge = returned(Fraction(10**5000 + 1, 3)).output
    assert huge == "1" + "0" * 4999 + "1/3"


def test_numpy_scalars_become_the_exact_python_number_they_hold() -> None:
    result = returned({"f32": np.float32(1.1), "f64": np.float64(1 / 3), "i": np.int64(2**62), "b": np.bool_(True)})
    assert result.output == {"f32": float(np.float32(1.1)), "f64": 1 / 3, "i": 2**62, "b": True}
    assert result.output["f32"] == 1.100000023841858  # a float32 widens exactly; "1.1" would be another number
    assert result.converted == []


def test_numpy_arrays_become_lists_not_their_abbreviated_print() -> None:
    result = returned(np.arange(2000))
    assert result.output == list(range(2000))


def test_a_longdouble_keeps_its_digits_whatever_numpys_print_options_say() -> None:
    third = np.longdouble(1) / 3
    if np.finfo(np.longdouble).precision <= np.finfo(np.float64).precision:
        pytest.skip("this platform's longdouble is a double")
    with np.printoptions(legacy="1.13"):  # str() then shows 12 digits
        result = returned(third)
    assert np.longdouble(result.output) == third
    assert [(c.type, c.number) for c in result.converted] == [("longdouble", True)]


def test_an_int_past_pythons_digit_limit_is_kept_as_its_digits_with_a_note() -> None:
    result = returned({"n": 10**5000, "small": 2**80})
    assert result.ok
    assert result.output == {"n": "1" + "0" * 5000, "small": 2**80}
    (conversion,) = result.converted
    assert (conversion.path, conversion.type, conversion.number) == (["n"], "int", True)
    assert "more digits than Python writes as a number" in conversion.note()
