"""The `@tool` decorator: a typed, documented Python function (or method) becomes a ToolSpec plus its callable."""

from __future__ import annotations

import functools
import inspect
import sys
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ConfigDict, TypeAdapter, create_model

from aeon.application.errors import ToolRegistrationError
from aeon.domain.provenance import Effect
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
    `pure`: the same arguments always give the same result and calling it changes nothing (so it is idempotent too):
    a durable run records no step for it and computes it again when the run executes again after a crash.
    `requires_approval`: a person approves every call, with its exact arguments, before it runs.
    `output_schema`: the JSON schema every output must match, declared: a mismatch fails the step. Without it, the
    schema is derived from the return annotation, and a mismatch is handled as tools.output_check says (a warning).
    `effect`: what a call does (none, read, write, external; undeclared counts as consequential); `trusted`: whether
    its output is trusted data (undeclared: trusted when the program registers it, untrusted from a tools module).
    """

    name: str | None = None
    example: Mapping[str, Any] | None = None
    timeout: float | None = None
    inline: bool = False
    idempotent: bool = False
    pure: bool = False
    requires_approval: bool = False
    output_schema: Mapping[str, Any] | None = None
    effect: Effect | None = None
    trusted: bool | None = None


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
    pure: bool = False,
    requires_approval: bool = False,
    output_schema: Mapping[str, Any] | None = None,
    effect: Effect | str | None = None,
    trusted: bool | None = None,
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
    pure: bool = False,
    requires_approval: bool = False,
    output_schema: Mapping[str, Any] | None = None,
    effect: Effect | str | None = None,
    trusted: bool | None = None,
) -> F | Callable[[F], F]:
    """Mark a function as a tool; use as `@tool` or `@tool(name=..., example={...}, timeout=..., pure=True)`.

    The function is returned unchanged (still directly callable); its ToolDefinition is attached and read back with
    `tool_definition`. Applied in a class body (decided by where it runs, never by `__qualname__`, which a
    `functools.wraps` wrapper copies from the method it wraps), only the options are recorded: the tool is built
    from the bound method (without `self`) when an instance is registered (`register_toolset`, or
    `register_function(obj.method)`). Anything else callable becomes a tool at once with its real signature: a
    function or wrapper, a `functools.partial` (named after its function), a callable object (named after its class,
    described by its `__call__`), or a bound method (returned wrapped in a function, with the definition attached).
    Raises ToolRegistrationError when the signature or docstring cannot describe a tool.
    """

    if timeout is not None and timeout <= 0:
        raise ToolRegistrationError(f"tool {name or getattr(fn, '__name__', '?')!r}: timeout must be positive")
    if effect is not None and effect not in Effect._value2member_map_:
        known = ", ".join(Effect)
        raise ToolRegistrationError(f"tool {name or getattr(fn, '__name__', '?')!r}: effect {effect!r} is not {known}")
    options = ToolOptions(
        name=name,
        example=example,
        timeout=timeout,
        inline=inline,
        idempotent=idempotent or pure,
        pure=pure,
        requires_approval=requires_approval,
        output_schema=output_schema,
        effect=None if effect is None else Effect(effect),
        trusted=trusted,
    )

    def decorate(func: F) -> F:
        return _decorated(func, options, sys._getframe(1))

    return decorate if fn is None else _decorated(fn, options, sys._getframe(1))


def _decorated(func: F, options: ToolOptions, applied_in: FrameType) -> F:
    """`func` with its ToolDefinition and options attached (only the options for a method being defined)."""
    if inspect.ismethod(func):  # a bound method takes no new attributes: wrap it
        func = _forwarding(func)  # type: ignore[assignment]
    elif _is_class_body(applied_in):
        # A method being defined: its tool is built from the bound method when an instance is registered.
        setattr(func, _OPTIONS, options)
        return func
    definition = build_definition(func, options)
    try:
        setattr(func, _ATTR, definition)
        setattr(func, _OPTIONS, options)
    except (AttributeError, TypeError):  # a callable object with __slots__: carry it on a forwarding function
        func = _forwarding(func)  # type: ignore[assignment]
        setattr(func, _ATTR, definition)
        setattr(func, _OPTIONS, options)
    return func


def _forwarding(target: Callable[..., Any]) -> Callable[..., Any]:
    """A plain function calling `target`, showing its name, docstring and signature (via `__wrapped__`)."""

    @functools.wraps(target)
    def call(*args: Any, **kwargs: Any) -> Any:
        return target(*args, **kwargs)

    return call


def _is_class_body(frame: FrameType) -> bool:
    """Whether `frame` runs a class statement's body: the one place where a decorated function becomes a method.

    A class body's code is not optimised (its names live in a dict, unlike a function's) and, unlike a module's, its
    namespace is not the globals; Python puts `__module__` and `__qualname__` in it before the body runs. The
    function's own `__qualname__` says nothing reliable: `functools.wraps` copies a method's onto any wrapper.
    """
    return (
        not frame.f_code.co_flags & inspect.CO_OPTIMIZED
        and frame.f_locals is not frame.f_globals
        and "__qualname__" in frame.f_locals
        and "__module__" in frame.f_locals
    )


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
    default_name, doc, annotated = _described_by(fn)
    tool_name = options.name or default_name
    if not tool_name:
        raise ToolRegistrationError("tool has no name: pass @tool(name=...)")

    def fail(problem: str) -> ToolRegistrationError:
        return ToolRegistrationError(f"tool {tool_name!r}: {problem}")

    description = _first_paragraph(doc)
    if not description:
        raise fail("has no docstring; its first paragraph becomes the tool description")
    try:
        hints = typing.get_type_hints(annotated, include_extras=True)
        signature = inspect.signature(fn)
    except Exception as exc:
        raise fail(f"cannot read the signature: {type(exc).__name__}: {exc}") from exc
    args_model, input_schema, output_schema = _schemas(tool_name, signature, hints, options, fail)
    example_args = dict(options.example or {})
    if options.example is not None:
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
        idempotent=options.idempotent,
        pure=options.pure,
        requires_approval=options.requires_approval,
        output_inferred=options.output_schema is None,
        effect=options.effect,
        trusted_output=options.trusted,
    )
    return ToolDefinition(spec=spec, fn=fn, args_model=args_model, options=options)


def _schemas(
    tool_name: str,
    signature: inspect.Signature,
    hints: Mapping[str, Any],
    options: ToolOptions,
    fail: Callable[[str], ToolRegistrationError],
) -> tuple[type[BaseModel], dict[str, Any], dict[str, Any]]:
    """The arguments' pydantic model, its JSON schema (no title, `required` always present) and the output schema:
    the declared one, else the return annotation's."""
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
        declared = options.output_schema
        returns = hints.get("return", Any)
        output_schema = (
            dict(declared) if declared is not None else TypeAdapter(returns).json_schema(mode="serialization")
        )
    except Exception as exc:
        raise fail(f"cannot derive a JSON schema: {type(exc).__name__}: {_one_line(exc)}") from exc
    input_schema.pop("title", None)
    input_schema.setdefault("required", [])
    return args_model, input_schema, output_schema


def _described_by(fn: Callable[..., Any]) -> tuple[str, str | None, Callable[..., Any]]:
    """The name, docstring and type-hinted callable behind `fn`: a partial's function, a callable object's
    `__call__` (named after its class), a `functools.wraps` wrapper's own copies (hints resolved where it points)."""
    if isinstance(fn, functools.partial):
        return _described_by(fn.func)
    if inspect.isroutine(fn):
        return getattr(fn, "__name__", ""), inspect.getdoc(fn), fn
    call: Callable[..., Any] = fn.__call__  # type: ignore[operator]  # a callable object's bound __call__
    return type(fn).__name__, inspect.getdoc(call) or inspect.getdoc(type(fn)), call


def _first_paragraph(doc: str | None) -> str:
    paragraph = (doc or "").strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines()).strip()


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
