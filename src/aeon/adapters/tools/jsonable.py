"""Tool output to JSON data without losing anything: what JSON cannot hold is kept as its full text, and noted."""

from __future__ import annotations

import enum
import importlib
import numbers
import sys
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

import msgspec
from pydantic_core import PydanticSerializationError, to_jsonable_python

from aeon.domain.tools import Conversion

_PLAIN = (str, int, float, bool, type(None))
# An int of this many bits may be past sys.get_int_max_str_digits() (4,300 by default: 4,300 digits hold > 14,284 bits)
_LONG_INT_BITS = 14_000
# The fewest bits an arbitrary-precision float is written with: a double's, so it never shows fewer digits than a float
_MIN_BITS = 53


def to_json_data(value: Any) -> tuple[Any, list[Conversion]]:
    """JSON data for `value` and the list of values recorded as text.

    Exact JSON types pass through; models, dataclasses, msgspec Structs, enums, dates, numpy scalars and arrays and
    the like become what they hold. A number JSON cannot hold exactly (Decimal, Fraction, a math library's big
    float, an int past Python's limit for numbers as text) and any object pydantic cannot encode become text —
    every digit the value holds, whatever a library's global print precision is — with a Conversion naming where.
    """
    converted: list[Conversion] = []
    return _walk(value, [], converted), converted


def _walk(value: Any, path: list[str | int], converted: list[Conversion]) -> Any:
    if type(value) in _PLAIN:
        return _long_int(value, path, converted) if type(value) is int else value
    if isinstance(value, enum.Enum):
        return _walk(value.value, path, converted)
    if (native := _numpy_native(value)) is not None:
        return _walk(native, path, converted)
    if isinstance(value, int | float | str):  # subclasses (numpy's float64 is a float) as the plain value
        return _walk(_plain(value), path, converted)
    if isinstance(value, numbers.Integral):
        return _long_int(int(value), path, converted)
    if isinstance(value, numbers.Number):
        real = isinstance(value, numbers.Real | Decimal)  # Decimal is a Number but not registered as Real
        converted.append(Conversion(path=path, type=type(value).__name__, number=real))
        return _number_text(value)
    if isinstance(value, Mapping):
        return {str(k): _walk(v, [*path, str(k)], converted) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_walk(v, [*path, i], converted) for i, v in enumerate(value)]
    try:
        data = to_jsonable_python(value, fallback=_structs)
    except (TypeError, ValueError, PydanticSerializationError):
        converted.append(Conversion(path=path, type=type(value).__name__))
        return str(value)
    return _walk(data, path, converted)


def _plain(value: int | float | str) -> int | float | str:
    if isinstance(value, int):
        return int(value)
    return float(value) if isinstance(value, float) else str(value)


def _long_int(value: int, path: list[str | int], converted: list[Conversion]) -> int | str:
    """`value`, or its digits as text when Python would refuse to write it (past sys.get_int_max_str_digits())."""
    if value.bit_length() < _LONG_INT_BITS:
        return value
    try:
        str(value)
    except ValueError:
        converted.append(Conversion(path=path, type="int", number=True))
        return _int_text(value)
    return value


def _int_text(value: int) -> str:
    """The digits of any int: decimal's conversion has no digit limit."""
    return str(Decimal(value))


def _number_text(value: Any) -> str:
    """Every digit a number holds, read from the value itself, never from a library's global print setting."""
    if isinstance(value, Fraction):
        return f"{_int_text(value.numerator)}/{_int_text(value.denominator)}"
    if isinstance(raw := getattr(value, "_mpf_", None), tuple):  # mpmath's mpf: (sign, mantissa, exponent, bits)
        return _mpf_text(raw)
    if isinstance(pair := getattr(value, "_mpc_", None), tuple):  # mpmath's mpc: two mpf
        real, imag = (_mpf_text(part) for part in pair)
        return f"({real}{'' if imag.startswith('-') else '+'}{imag}j)"
    if type(value).__module__ == "numpy":  # a scalar wider than a double (longdouble, clongdouble)
        return _numpy_text(value)
    return str(value)


def _mpf_text(raw: tuple[Any, ...]) -> str:
    """An mpf by its own mantissa's bits (at least a double's): `str` would round to the global `mp.dps` of the
    moment, which a tool may have lowered (`mp.dps = 3` gives "1.3" for 1.3037109375)."""
    libmp = importlib.import_module("mpmath.libmp")
    digits = libmp.repr_dps(max(int(raw[3]), _MIN_BITS))
    return str(libmp.to_str(raw, digits))


def _numpy_native(value: Any) -> Any:
    """The Python value a numpy scalar or array holds (exactly: a float32 widens to a float, an array becomes lists),
    or None: not numpy, or a scalar no Python type holds (a longdouble)."""
    if type(value).__module__ != "numpy" or not hasattr(value, "tolist"):
        return None
    native = value.tolist()
    return None if type(native) is type(value) else native


def _numpy_text(value: Any) -> str:
    """A numpy float or complex wider than Python's, in the fewest digits that read back as it, by numpy's own
    rule: `str` follows numpy's print options, which may cut digits (legacy="1.13")."""
    numpy = sys.modules["numpy"]
    if isinstance(value, numpy.complexfloating):
        real, imag = _numpy_text(value.real), _numpy_text(value.imag)
        return f"({real}{'' if imag.startswith('-') else '+'}{imag}j)"
    if isinstance(value, numpy.floating):
        small_or_large = value != 0 and not 1e-4 <= abs(value) < 1e16
        render = numpy.format_float_scientific if small_or_large else numpy.format_float_positional
        return str(render(value, unique=True, trim="-"))
    return str(value)


def _structs(value: Any) -> Any:
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    raise TypeError(f"{type(value).__name__} is not JSON data")
