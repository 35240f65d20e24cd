"""What an operator says a cut-off tool call returned (`aeon resume --mark-done`): it had its effect, so the run
takes this output as the call's result, recorded as operator-given, and never runs the call again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from aeon.application.errors import InputError


class Given(msgspec.Struct, frozen=True):
    """The output an operator gives for a cut-off tool call they found had its effect (`--mark-done`)."""

    output: Any


def operator_output(
    mark_done: bool, output: str | None, output_file: Path | None, *, rerun_unsafe: bool
) -> Given | None:
    """The operator's output for `aeon resume --mark-done` (`--output` JSON, or `--output-file` holding it), or None
    without --mark-done; InputError for a bad combination, a file that cannot be read, or text that is not JSON."""
    if not mark_done:
        if output is not None or output_file is not None:
            raise InputError("--output and --output-file go with --mark-done")
        return None
    if rerun_unsafe:
        raise InputError("--mark-done and --rerun-unsafe are the two answers to one question: give one")
    if (output is None) == (output_file is None):
        raise InputError("--mark-done needs the tool's output: --output JSON or --output-file FILE (one of them)")
    where, text = "--output", output
    if output_file is not None:
        where = str(output_file)
        try:
            text = output_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read {output_file}: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        return Given(output=json.loads(text or ""))
    except RecursionError as exc:
        raise InputError(f"{where} is nested too deeply to read as JSON") from exc
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{where} is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); a text is quoted: '\"done\"'"
        ) from exc
