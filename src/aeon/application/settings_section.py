"""The base of every settings section (adapters/*/settings.py, entrypoints/config/): an unknown key is an error, and
a validated section is frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
