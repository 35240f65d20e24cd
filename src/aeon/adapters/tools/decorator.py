"""The `@tool` decorator: a typed, documented Python function (or method) becomes a ToolSpec plus its callable."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ConfigDict, TypeAdapter, create_model

from aeon.application.errors import ToolRegistrationError
from aeon.domain.tools import ToolSpec

F = TypeVar("F", bound=Callable[..., Any])

_ATTR = "__aeon_tool__"
_OPTIONS = "__aeon_tool_options__"


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A decorated tool: the domain contract (`spec`), the code (`fn`) and the pydantic model of its arguments."""

    spec: ToolSpec
    fn: Callable[..., Any]
    args_model: type[BaseModel]
    options: ToolOptions


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """What `@tool(...)` said: name, example, and how the call runs.

    `timeout`: the most seconds one call may take (else `tools.timeout` from config); the run's own deadline
    applies too. `inline`: run a sync tool on the event loop instead of a worker thread — only for tools that
    return in microseconds and never block (they can be neither timed out nor interrupted). `idempotent`: calling it
    twice with the same arguments has the effect of calling it once, so a durable run may run it again when a crash
    cut it off; a tool that is not (the default) stops such a run for a human to decide (`aeon resume --rerun-unsafe`).
    """

    name: str | None = None
    example: Mapping[str, Any] | None = None
    timeout: float | None = None
    inline: bool = False
    idempotent: bool = False


@overload
def tool(fn: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    example: Mapping[str, Any] | None = None,
    timeout: float | None = None,
    inline: bool = False,
    idempotent: bool = False,
) -> Callable[[F], F]: ...


def tool(
    fn: F | None = None,
    /,
    *,
    name: str | None = None,
    example: Mapping[str, Any] | None = None,
    timeout: float | None = None,
    inline: bool = False,
    idempotent: bool = False,
) -> F | Callable[[F], F]:
    """Mark a function as a tool; use as `@tool` or `@tool(name=..., example={...}, timeout=..., idempotent=True)`.

    The function is returned unchanged (still directly callable); its ToolDefinition is attached and read back with
    `tool_definition`. On a method in a class body only the options are recorded: the tool is built from the bound
    method (without `self`) when an instance is registered (`register_toolset`, or `register_function(obj.method)`).
    Given a bound method, `tool(obj.method)` returns a function wrapping it, with the definition attached. Raises
    ToolRegistrationError when the signature or docstring cannot describe a tool.
    """

    if timeout is not None and timeout <= 0:
        raise ToolRegistrationError(f"tool {name or getattr(fn, '__name__', '?')!r}: timeout must be positive")
    options = ToolOptions(name=name, example=example, timeout=timeout, inline=inline, idempotent=idempotent)

    def decorate(func: F) -> F:
        if inspect.ismethod(func):  # a bound method takes no new attributes: wrap it
            bound = func

            @functools.wraps(bound)
            def call(*args: Any, **kwargs: Any) -> Any:
                return bound(*args, **kwargs)

            func = call  # type: ignore[assignment]
        elif _in_class_body(func):
            setattr(func, _OPTIONS, options)
            return func
        setattr(func, _ATTR, build_definition(func, options))
        return func

    return decorate if fn is None else decorate(fn)


def _in_class_body(func: Callable[..., Any]) -> bool:
    *outer, _ = getattr(func, "__qualname__", "").split(".")
    return bool(outer) and outer[-1] != "<locals>"


def tool_options(obj: object) -> ToolOptions | None:
    """The options `@tool` recorded on a method (also read through a bound method), or None."""
    found = getattr(obj, _OPTIONS, None)
    return found if isinstance(found, ToolOptions) else None


def tool_definition(obj: object) -> ToolDefinition | None:
    """The ToolDefinition attached by `@tool`, or None for anything else."""
    found = getattr(obj, _ATTR, None)
    return found if isinstance(found, ToolDefinition) else None


def build_definition(fn: Callable[..., Any], options: ToolOptions | None = None) -> ToolDefinition:
    """Derive the ToolSpec (input/output JSON schemas, description, example) from `fn`'s signature and docstring."""
    options = options or ToolOptions()
    example = options.example
    tool_name = options.name or getattr(fn, "__name__", "")
    if not tool_name:
        raise ToolRegistrationError("tool has no name: pass @tool(name=...)")

    def fail(problem: str) -> ToolRegistrationError:
        return ToolRegistrationError(f"tool {tool_name!r}: {problem}")

    description = _first_paragraph(inspect.getdoc(fn))
    if not description:
        raise fail("has no docstring; its first paragraph becomes the tool description")
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
        signature = inspect.signature(fn)
    except Exception as exc:
        raise fail(f"cannot read the signature: {type(exc).__name__}: {exc}") from exc

    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise fail(f"parameter {param.name!r} must be a named parameter (no *args, **kwargs or positional-only)")
        if param.name not in hints:
            raise fail(f"parameter {param.name!r} has no type annotation")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hints[param.name], default)

    try:
        args_model: type[BaseModel] = create_model(f"{tool_name}_args", __config__=ConfigDict(extra="forbid"), **fields)
        input_schema = args_model.model_json_schema()
        returns = hints.get("return", Any)
        output_schema = TypeAdapter(returns).json_schema(mode="serialization")
    except Exception as exc:
        raise fail(f"cannot derive a JSON schema: {type(exc).__name__}: {_one_line(exc)}") from exc
    input_schema.pop("title", None)
    input_schema.setdefault("required", [])

    example_args = dict(example or {})
    if example is not None:
        try:
            args_model.model_validate(example_args)
        except Exception as exc:
            raise fail(f"example does not match the parameters: {_one_line(exc)}") from exc

    spec = ToolSpec(
        name=tool_name,
        description=description,
        input_schema=input_schema,
        output_schema=output_schema,
        example=example_args,
    )
    return ToolDefinition(spec=spec, fn=fn, args_model=args_model, options=options)


def _first_paragraph(doc: str | None) -> str:
    paragraph = (doc or "").strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines()).strip()


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
