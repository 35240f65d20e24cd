"""What a person gives when deciding on a tool call that waits for approval, read the same way by every door
(`aeon approve --args`, `aeon ui`'s edit form): the edited arguments, and who decides when nobody says."""

from __future__ import annotations

import json
from typing import Any

from aeon.application.errors import InputError

MAX_ARGS = 1024 * 1024  # edited arguments are at most 1 MiB


def edited_args(text: str | None, what: str = "--args") -> dict[str, Any] | None:
    """The edited arguments of an approval (`what` names where they came from); InputError for no JSON object."""
    if text is None:
        return None
    if len(text) > MAX_ARGS:
        raise InputError(f"{what} is over 1 MiB")
    try:
        value = json.loads(text, object_pairs_hook=_once_each)
    except RecursionError:
        raise InputError(f"{what} is nested too deeply to read as JSON") from None
    except _Twice as exc:
        raise InputError(f"{what} names {exc.args[0]!r} twice: give each argument once") from None
    except ValueError as exc:
        raise InputError(f"{what} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InputError(f"{what} must be a JSON object (the tool's arguments by name)")
    return value


class _Twice(Exception):
    """A JSON object that names a key twice (json.loads would keep the last silently)."""


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Twice(key)
        found[key] = value
    return found


def user_name() -> str:
    """Who decides, for the record, when nobody says: the user name of this process."""
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # no user name to be found (a container without one)
        return "operator"
