"""How a command reports failure: one line on stderr, or under --json one JSON document on stdout; and its exit code.

Exit codes: 0 ok, 1 invalid plan (validate) or a stdout that cannot be written, 2 bad usage, config or input (an
event log that cannot be written among them), 3 expired, 4 unrecoverable (records lost from the log among them),
130 Ctrl-C.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import typer
from typer.core import TyperCommand

from aeon.domain.errors import AeonError
from aeon.domain.text import json_safe, terminal_safe

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_EXPIRED, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
EXIT_UNVERIFIED = 5  # the run ended, but a tool step's output is LLM fallback text
EXIT_AWAITING = 6  # the run waits on the record for a person's decision (aeon approve / aeon deny)
EXIT_DENIED = 7  # the run did not get done: a person denied a tool call it needed
EXIT_OUTPUT = 1


def say(message: str) -> None:
    """One line of what a command does, on stderr, made inert for the terminal."""
    typer.echo(f"aeon: {terminal_safe(message)}", err=True)


def fail(message: str, exit_code: int = EXIT_USAGE, *, code: str = "AEON.USAGE", as_json: bool = False) -> typer.Exit:
    """Report `message` once (stderr, or the JSON error document on stdout) and return the Exit to raise; an error
    may quote what it failed on, so it is redacted first."""
    from aeon.entrypoints.secrets import redactor_for  # the settings schema, loaded only when an error is reported

    message = redactor_for(None).text(message)
    if as_json:
        doc = {"status": "error", "error": {"code": code, "message": message}}
        sys.stdout.write(json_safe(msgspec.json.encode(doc).decode()) + "\n")
    else:
        typer.echo(f"aeon: {terminal_safe(message)}", err=True)
    return typer.Exit(exit_code)


@contextmanager
def reported(*, as_json: bool = False, debug: bool = False) -> Iterator[None]:
    """Turn what a command raises into one report and an exit code: an AeonError is bad usage, config or input (2),
    Ctrl-C is 130, anything else is a bug (4, the traceback only with --debug)."""
    try:
        yield
    except typer.Exit:
        raise
    except AeonError as exc:
        if debug:
            raise
        raise fail(str(exc), code=exc.code, as_json=as_json) from None
    except KeyboardInterrupt:
        raise fail("interrupted", EXIT_INTERRUPTED, code="AEON.INTERRUPTED", as_json=as_json) from None
    except Exception as exc:
        if debug:
            raise
        message = f"internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)"
        raise fail(message, EXIT_ERROR, code="AEON.INTERNAL", as_json=as_json) from None


class JsonAwareCommand(TyperCommand):
    """A command whose usage errors (a bad option value, a missing argument) are JSON documents under --json too."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        with _usage_errors(as_json="--json" in args):
            ctx = super().make_context(info_name, args, parent, **extra)
        ctx.meta["aeon.json"] = "--json" in args
        return ctx

    def invoke(self, ctx: Any) -> Any:
        with _usage_errors(as_json=bool(ctx.meta.get("aeon.json"))):  # typer checks option ranges here
            return super().invoke(ctx)


@contextmanager
def _usage_errors(*, as_json: bool) -> Iterator[None]:
    try:
        yield
    except Exception as exc:  # click's UsageError: typer vendors click, so its class has no public import path
        message = getattr(exc, "format_message", None)
        if not as_json or not callable(message):
            raise
        raise fail(str(message()), getattr(exc, "exit_code", EXIT_USAGE), as_json=True) from None
