"""The @tool decorator derives a ToolSpec from a function's signature, annotations and docstring."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from aeon.adapters.tools import tool, tool_definition
from aeon.application.errors import ToolRegistrationError
from aeon.domain.tools import ToolSpec


class Opaque:
    """A type pydantic cannot describe in JSON schema."""


class Point(BaseModel):
    x: int
    y: int


def spec_of(fn: Any) -> ToolSpec:
    definition = tool_definition(fn)
    assert definition is not None
    return definition.spec


def test_bare_decorator_builds_an_object_schema_from_int_float_and_str_parameters() -> None:
    @tool
    def scale(count: int, factor: float, label: str) -> float:
        """Scale a count."""
        return count * factor

    spec = spec_of(scale)
    schema = spec.input_schema
    assert spec.name == "scale"
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["count", "factor", "label"]
    assert {k: v["type"] for k, v in schema["properties"].items()} == {
        "count": "integer",
        "factor": "number",
        "label": "string",
    }
    assert spec.output_schema == {"type": "number"}


def test_an_output_schema_given_to_tool_is_declared_and_replaces_the_annotations() -> None:
    @tool
    def loose(n: int) -> float:
        """Loosely annotated."""
        return n

    @tool(output_schema={"type": "object", "required": ["value"]})
    def strict(n: int) -> Any:
        """Declares its output."""
        return {"value": n}

    assert spec_of(loose).output_inferred  # from the annotation: tools.output_check decides what a mismatch does
    assert spec_of(strict).output_schema == {"type": "object", "required": ["value"]}
    assert not spec_of(strict).output_inferred  # declared: always enforced


def test_decorated_function_is_still_directly_callable() -> None:
    @tool
    def double(n: int) -> int:
        """Double a number."""
        return n * 2

    assert double(4) == 8


def test_optional_and_defaulted_parameters_are_not_required() -> None:
    @tool
    def search(query: str, limit: int = 10, lang: str | None = None) -> list[str]:
        """Search for things."""
        return []

    spec = spec_of(search)
    props = spec.input_schema["properties"]
    assert spec.input_schema["required"] == ["query"]
    assert props["limit"]["default"] == 10
    assert {"type": "null"} in props["lang"]["anyOf"]
    assert spec.output_schema == {"type": "array", "items": {"type": "string"}}


def test_pydantic_model_parameter_appears_as_a_referenced_object_schema() -> None:
    @tool
    def distance(a: Point, b: Point) -> float:
        """Manhattan distance between two points."""
        return abs(a.x - b.x) + abs(a.y - b.y)

    schema = spec_of(distance).input_schema
    assert schema["properties"]["a"] == {"$ref": "#/$defs/Point"}
    assert schema["$defs"]["Point"]["required"] == ["x", "y"]


def test_field_descriptions_from_annotated_metadata_reach_the_schema() -> None:
    @tool
    def pick(n: Annotated[int, Field(description="how many", ge=1)]) -> int:
        """Pick n."""
        return n

    prop = spec_of(pick).input_schema["properties"]["n"]
    assert prop["description"] == "how many"
    assert prop["minimum"] == 1


def test_description_is_the_first_docstring_paragraph_joined_on_one_line() -> None:
    @tool
    def fetch(url: str) -> str:
        """Fetch a page
        and return its text.

        Details that the planner does not need.
        """
        return url

    assert spec_of(fetch).description == "Fetch a page and return its text."


def test_name_and_example_arguments_are_recorded() -> None:
    @tool(name="add_numbers", example={"a": 1, "b": 2})
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    spec = spec_of(add)
    assert spec.name == "add_numbers"
    assert spec.example == {"a": 1, "b": 2}


def test_async_function_output_schema_is_its_awaited_return_type() -> None:
    @tool
    async def ping() -> str:
        """Answer pong."""
        return "pong"

    spec = spec_of(ping)
    assert spec.input_schema["properties"] == {}
    assert spec.input_schema["required"] == []
    assert spec.output_schema == {"type": "string"}


def test_missing_return_annotation_means_any_output() -> None:
    @tool
    def anything(x: int):  # type: ignore[no-untyped-def]
        """Return whatever."""
        return x

    assert spec_of(anything).output_schema == {}


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("def f(x):\n    '''Doc.'''\n", "parameter 'x' has no type annotation"),
        ("def f(*args: int) -> int:\n    '''Doc.'''\n", "must be a named parameter"),
        ("def f(x: int, /) -> int:\n    '''Doc.'''\n", "must be a named parameter"),
        ("def f(x: int) -> int:\n    return x\n", "has no docstring"),
    ],
)
def test_unusable_signatures_raise_a_one_line_registration_error(source: str, problem: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # builds throwaway functions with odd signatures for the decorator
    with pytest.raises(ToolRegistrationError, match=problem) as caught:
        tool(namespace["f"])
    assert str(caught.value).startswith("tool 'f': ")
    assert "\n" not in str(caught.value)


def test_example_that_does_not_fit_the_parameters_is_rejected() -> None:
    with pytest.raises(ToolRegistrationError, match="example does not match"):

        @tool(example={"n": "not a number"})
        def square(n: int) -> int:
            """Square n."""
            return n * n


def test_parameter_type_without_a_json_schema_is_rejected() -> None:
    with pytest.raises(ToolRegistrationError, match="cannot derive a JSON schema"):

        @tool
        def use(thing: Opaque) -> None:
            """Use a thing."""


def test_undecorated_function_has_no_definition() -> None:
    def plain(x: int) -> int:
        return x

    assert tool_definition(plain) is None


def test_annotation_naming_an_unknown_type_is_reported_with_its_name() -> None:
    def f(x: Missing) -> int:  # type: ignore[name-defined]  # noqa: F821
        """Doc."""
        return 0

    with pytest.raises(ToolRegistrationError, match=r"cannot read the signature: NameError: .*'Missing'"):
        tool(f)
