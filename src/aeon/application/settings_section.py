"""The base of every settings section (adapters/*/settings.py, kernel/sections.py, config/): an unknown key is an
error, and a validated section is frozen; and where in a tree of sections a key path leads (for an error naming a
key)."""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def did_you_mean(root: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """` (did you mean 'script'?)` for an unknown key at `loc` in the tree of `root` close to one the section it sits
    in knows; else ""."""
    section = section_at(root, loc[:-1])
    if section is None or not isinstance(loc[-1], str):
        return ""
    known = [field.alias or name for name, field in section.model_fields.items()]
    close = difflib.get_close_matches(loc[-1], known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def section_at(root: type[BaseModel], path: tuple[Any, ...]) -> type[BaseModel] | None:
    """The settings model at a key path under `root` (a list index or a dict key inside it steps over its
    container)."""
    section: type[BaseModel] = root
    inside_container = False
    for part in path:
        if inside_container:  # the index of a list of sections, or a key of a dict of them
            inside_container = False
            continue
        field = section.model_fields.get(part) if isinstance(part, str) else None
        if field is None:
            return None
        found = _model_in(field.annotation)
        if found is None:
            return None
        section, inside_container = found
    return None if inside_container else section


def _model_in(annotation: Any) -> tuple[type[BaseModel], bool] | None:
    """The settings model an annotation holds, and whether it holds it in a container (list, dict); else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return next((found for arg in args if (found := _model_in(arg)) is not None), None)
    if origin in (list, dict) and args:
        found = _model_in(args[-1])
        return None if found is None or found[1] else (found[0], True)
    return None
