"""Tool output to JSON data without losing anything: what JSON cannot hold is kept as its full text, and noted."""

from __future__ import annotations

import enum
import numbers
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import msgspec
from pydantic_core import PydanticSerializationError, to_jsonable_python

from aeon.domain.tools import Conversion

_PLAIN = (str, int, float, bool, type(None))


def to_json_data(value: Any) -> tuple[Any, list[Conversion]]:
    """JSON data for `value` and the list of values recorded as text.

    Exact JSON types pass through; models, dataclasses, msgspec Structs, enums, dates and the like become what
    pydantic makes of them. A number JSON cannot hold exactly (Decimal, Fraction, a math library's big float) and
    any object pydantic cannot encode become `str(value)` — every digit kept — with a Conversion naming where.
    """
    converted: list[Conversion] = []
    return _walk(value, [], converted), converted


def _walk(value: Any, path: list[str | int], converted: list[Conversion]) -> Any:
    if type(value) in _PLAIN:
        return value
    if isinstance(value, enum.Enum):
        return _walk(value.value, path, converted)
    if isinstance(value, int | float | str):  # subclasses (numpy's float64 is a float) as the plain value
        return _plain(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Number):
        real = isinstance(value, numbers.Real | Decimal)  # Decimal is a Number but not registered as Real
        converted.append(Conversion(path=path, type=type(value).__name__, number=real))
        return str(value)
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


def _structs(value: Any) -> Any:
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    raise TypeError(f"{type(value).__name__} is not JSON data")
