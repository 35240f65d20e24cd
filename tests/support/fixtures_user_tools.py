"""A user tools module for the loader tests: two @tool functions, a helper that is not a tool, and an alias."""

from __future__ import annotations

from pydantic import BaseModel

from aeon.adapters.tools import tool


class Greeting(BaseModel):
    text: str
    shouted: bool


def _shout(text: str) -> str:
    return text.upper() + "!"


@tool(example={"name": "Ada"})
def greet(name: str, shout: bool = False) -> Greeting:
    """Greet someone by name.

    Returns a Greeting model, which the registry dumps to plain JSON data.
    """
    text = f"hello {name}"
    return Greeting(text=_shout(text) if shout else text, shouted=shout)


@tool(name="word_count")
async def count_words(text: str) -> int:
    """Count the words in a text, split on whitespace."""
    return len(text.split())


def not_a_tool(x: int) -> int:
    """A plain function the loader must ignore."""
    return x


# The same tool reachable under a second name must be registered once.
greet_alias = greet
