"""ToolRegistry: the in-process ToolPort adapter that checks, stores and invokes tools."""

from __future__ import annotations

import asyncio
import builtins
import functools
import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import msgspec
from pydantic import BaseModel, ValidationError

from aeon.adapters.tools.decorator import ToolDefinition, ToolOptions, build_definition, tool_definition, tool_options
from aeon.adapters.tools.jsonable import to_json_data
from aeon.adapters.tools.threads import run_on_daemon_thread
from aeon.adapters.tools.toolset import Toolset, toolset_definitions
from aeon.adapters.tools.untrusted import LeftEarly
from aeon.application.errors import ToolNotFound, ToolRegistrationError
from aeon.domain.tools import ToolResult, ToolSpec

# The strictest name rule among providers (OpenAI function names), so any registered tool can be offered to any LLM.
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


DEFAULT_TIMEOUT = 60.0


class ToolRegistry:
    """Satisfies ToolPort. Registration checks every contract up front; invocation never raises for a tool's fault.

    Every call has a deadline: the tool's own `@tool(timeout=...)`, else `timeout` (config `tools.timeout`), and
    the caller's (the run's remaining time), whichever is first. Sync tools run on a daemon thread so that a call
    past its deadline can be abandoned and Ctrl-C is never blocked; `@tool(inline=True)` tools (the built-ins,
    which return in microseconds) run on the event loop. Async tools are cancelled at their deadline.
    """

    def __init__(self, *, timeout: float | None = DEFAULT_TIMEOUT) -> None:
        self._specs: dict[str, ToolSpec] = {}
        self._fns: dict[str, Callable[..., Any]] = {}
        self._models: dict[str, type[BaseModel]] = {}
        self._options: dict[str, ToolOptions] = {}
        self._timeout = timeout

    def register(self, spec: ToolSpec, fn: Callable[..., Any], *, vetted: bool = False) -> None:
        """Register `fn` under `spec`. Raises ToolRegistrationError for a bad name, schema, example or a duplicate.

        `vetted`: the schemas and example were checked already, so only the name is (the built-ins: their schemas
        are fixed, and a test checks them; jsonschema then stays unloaded until a schema needs it)."""
        check_spec(spec, taken=spec.name in self._specs, vetted=vetted)
        if not callable(fn):
            raise ToolRegistrationError(f"tool {spec.name!r}: {fn!r} is not callable")
        self._specs[spec.name] = spec
        self._fns[spec.name] = fn

    def register_function(self, fn: Callable[..., Any], *, vetted: bool = False) -> ToolSpec:
        """Register a function decorated with `@tool` (or a bound method whose method is); its arguments are
        validated by its pydantic model on invoke. `vetted` as for `register`."""
        definition = tool_definition(fn)
        options = tool_options(fn) if inspect.ismethod(fn) else None
        if definition is None and options is not None:
            definition = build_definition(fn, options)
        if definition is None:
            name = getattr(fn, "__name__", repr(fn))
            raise ToolRegistrationError(f"tool {name!r}: not decorated with @tool")
        return self._add(definition, vetted=vetted)

    def register_toolset(self, toolset: Toolset) -> builtins.list[ToolSpec]:
        """Register every public method of a Toolset instance; all or none (a bad method registers nothing)."""
        definitions = toolset_definitions(toolset)
        names = [d.spec.name for d in definitions]
        for i, d in enumerate(definitions):
            check_spec(d.spec, taken=d.spec.name in self._specs or d.spec.name in names[:i])
        return [self._add(d) for d in definitions]

    def register_definition(self, definition: ToolDefinition) -> ToolSpec:
        """Register a tool already derived (`build_definition`): a plain function a program hands over as a tool."""
        return self._add(definition)

    def _add(self, definition: ToolDefinition, *, vetted: bool = False) -> ToolSpec:
        self.register(definition.spec, definition.fn, vetted=vetted)
        self._models[definition.spec.name] = definition.args_model
        self._options[definition.spec.name] = definition.options
        return definition.spec

    def require_approval(self, name: str, needed: bool = True) -> None:
        """Whether each call of tool `name` needs a person's approval (config tools.approval), over what it said."""
        spec = self._specs.get(name)
        if spec is None:
            known = ", ".join(sorted(self._specs)) or "none"
            raise ToolRegistrationError(f"tools.approval names tool {name!r}, which is not registered (tools: {known})")
        self._specs[name] = msgspec.structs.replace(spec, requires_approval=needed)

    def distrust_undeclared(self, name: str) -> ToolSpec:
        """Tool `name`'s output is untrusted data unless the tool declared otherwise (`@tool(trusted=...)`)."""
        spec = self._specs[name]
        if spec.trusted_output is None:
            spec = self._specs[name] = msgspec.structs.replace(spec, trusted_output=False)
        return spec

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def is_idempotent(self, name: str) -> bool:
        """Whether the tool said running it twice is the same as once (`@tool(idempotent=True)`; False when unknown)."""
        spec = self._specs.get(name)
        return spec is not None and spec.idempotent

    def is_pure(self, name: str) -> bool:
        """Whether the tool said it is deterministic and changes nothing (`@tool(pure=True)`; False when unknown)."""
        spec = self._specs.get(name)
        return spec is not None and spec.pure

    def list(self) -> builtins.list[ToolSpec]:
        return builtins.list(self._specs.values())

    async def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float | None = None) -> ToolResult:
        """Run the tool; its exceptions become ToolResult(error="Type: message"). Raises ToolNotFound.

        So does what a tool raises to end the process or its thread (sys.exit(), KeyboardInterrupt, any other
        BaseException): a tool's fault fails its step, never the run. A real Ctrl-C is not the tool's: it reaches the
        run as the cancellation of its task (asyncio's CancelledError, which passes through) or, for a sync tool, on
        the main thread while the tool runs on its own.

        The output becomes JSON data; a value JSON cannot hold (a Decimal, a custom object) is kept as its full text
        and listed in `converted`, so a tool that already did its work never loses its result.
        """
        fn = self._fns.get(name)
        if fn is None:
            known = ", ".join(sorted(self._specs)) or "none"
            raise ToolNotFound(f"unknown tool {name!r} (registered: {known})")
        options = self._options.get(name, ToolOptions())
        limits = [t for t in (options.timeout or self._timeout, time_left) if t is not None]
        limit = min(limits) if limits else None
        try:
            kwargs = self._arguments(name, args)
            output = self._start(fn, kwargs, inline=options.inline)
            if inspect.isawaitable(output):  # a sync inline tool has already returned: no deadline could cut it
                try:
                    async with asyncio.timeout(limit):
                        output = await output
                except TimeoutError:
                    caller = time_left is not None and limit == time_left
                    why = "the run's time cap" if caller else "its timeout"
                    error = f"TimeoutError: did not finish within {limit:g} s ({why}); abandoned"
                    return ToolResult(error=error, cut_at_time_left=caller)
            data, converted = to_json_data(output)
            return ToolResult(output=data, converted=converted)
        except ValidationError as exc:
            return ToolResult(error=f"ValidationError: {_validation_summary(exc)}")
        except LeftEarly as exc:  # from a sync tool's thread
            return ToolResult(error=_left_early(exc.raised))
        except Exception as exc:
            return ToolResult(error=f"{type(exc).__name__}: {exc}")
        except asyncio.CancelledError:  # the run is being stopped (Ctrl-C, its deadline): not the tool's doing
            raise
        except BaseException as exc:  # an async or inline tool, on the event loop
            return ToolResult(error=_left_early(exc))

    @staticmethod
    def _start(fn: Callable[..., Any], kwargs: dict[str, Any], *, inline: bool) -> Any:
        """The tool's result, or what to await for it: its coroutine, or its call on a daemon thread."""
        if inspect.iscoroutinefunction(fn) or inline:
            return fn(**kwargs)
        return _settled(run_on_daemon_thread(_contained(fn), **kwargs))

    def _arguments(self, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        model = self._models.get(name)
        if model is None:
            return dict(args)
        # Validation turns JSON values into what the signature asks for (e.g. a dict into a pydantic model).
        validated = model.model_validate(dict(args))
        return {field: getattr(validated, field) for field in type(validated).model_fields}


async def _settled(pending: Awaitable[Any]) -> Any:
    """What a sync tool returned on its thread, awaited in turn when it is itself awaitable (a coroutine)."""
    output = await pending
    return await output if inspect.isawaitable(output) else output


def _contained(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` raising LeftEarly for what it raises that is not an Exception: on its own thread that can only be the
    tool's doing (signals reach the main thread), and it must not pass for the cancellation of the run."""

    @functools.wraps(fn)
    def call(**kwargs: Any) -> Any:
        try:
            return fn(**kwargs)
        except Exception:
            raise
        except BaseException as exc:
            raise LeftEarly(exc) from None

    return call


def _left_early(raised: BaseException) -> str:
    """The error of a call that raised `raised` (not an Exception) instead of returning: what it raised, in one line."""
    if isinstance(raised, SystemExit):
        return f"SystemExit: the tool called sys.exit({raised.code!r})"
    detail = _one_line(str(raised))
    return f"{type(raised).__name__}: raised by the tool{f': {detail}' if detail else ''}"


def check_spec(spec: ToolSpec, *, taken: bool, vetted: bool = False) -> None:
    """Raises ToolRegistrationError naming the tool when its name, schemas or example break a rule (or `taken`);
    `vetted` checks the name only."""

    def fail(problem: str) -> ToolRegistrationError:
        return ToolRegistrationError(f"tool {spec.name!r}: {problem}")

    if not _NAME.match(spec.name):
        raise fail("name must be 1-64 characters of letters, digits, '_' or '-'")
    if taken:
        raise fail("a tool with this name is already registered")
    if vetted:
        return
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    for label, schema in (("input_schema", spec.input_schema), ("output_schema", spec.output_schema)):
        if not isinstance(schema, dict):
            raise fail(f"{label} must be a JSON object, got {type(schema).__name__}")
        try:
            validator_for(schema).check_schema(schema)
        except SchemaError as exc:
            raise fail(f"{label} is not a valid JSON schema: {_one_line(exc.message)}") from exc
    if spec.input_schema.get("type") != "object":
        raise fail('input_schema must describe an object ("type": "object")')
    # An empty example means "none given", not "call it with no arguments".
    validator = validator_for(spec.input_schema)(spec.input_schema)
    problems = [_one_line(error.message) for error in validator.iter_errors(spec.example)] if spec.example else []
    if problems:
        raise fail(f"example does not match input_schema: {'; '.join(problems)}")


def _validation_summary(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def _one_line(text: str) -> str:
    return " ".join(text.split())
