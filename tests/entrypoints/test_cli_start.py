"""CLI start: `aeon --version` and `aeon --help` load typer and a few modules of the CLI only, a scripted run loads no
library it does not use, and progress lines written without rich are exactly what rich writes to a pipe."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

import aeon
from aeon.adapters.console import Lines
from aeon.domain.text import terminal_safe

from cli_harness import DEMO_CONFIG, REQUEST

# What each command must not import: the durable engine, tracing, the MCP SDK, HTTP, the heavy display and schema
# libraries, the web stack of aeon ui (and what `--version` and `--help` never need: the settings schema, the
# container, the kernel).
NEVER = (
    *("dbos", "sqlalchemy", "opentelemetry", "mcp", "httpx", "rich", "jsonschema", "json_repair"),
    *("starlette", "uvicorn", "sse_starlette", "jinja2"),  # aeon ui's web stack
)
ONLY_TO_RUN = ("dependency_injector", "yaml", "asyncio", "aeon.application", "aeon.adapters")
# The one adapter every command loads: the process's stdout guard and exits, standard library only (checked below).
AT_START = ("aeon.adapters", "aeon.adapters.process")

_LOADED = """
import sys
try:
    from aeon.entrypoints.cli import main
    sys.argv[0] = "aeon"
    main()
finally:
    names = {NAMES!r}
    seen = [m for m in sys.modules if m not in {AT_START!r}]
    print(sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in seen)), file=sys.stderr)
"""


def loaded(*args: str | Path, names: tuple[str, ...], cwd: Path) -> list[str]:
    """Which of `names` (packages or modules) `aeon ARGS` had imported when it ended, run in a pipe."""
    code = _LOADED.replace("{NAMES!r}", repr(names)).replace("{AT_START!r}", repr(set(AT_START)))
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(aeon.__file__).parents[1]), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return eval(proc.stderr.splitlines()[-1])  # type: ignore[no-any-return]


def test_the_adapter_loaded_at_start_imports_the_standard_library_only() -> None:
    import ast

    import aeon.adapters.process as process

    tree = ast.parse(Path(process.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported, "no imports found: the check reads nothing"
    assert {name.split(".")[0] for name in imported} <= set(sys.stdlib_module_names) | {"__future__"}


@pytest.mark.parametrize("args", [("--version",), ("--help",)])
def test_version_and_help_load_neither_the_kernel_nor_any_heavy_library(args: tuple[str, ...], tmp_path: Path) -> None:
    assert loaded(*args, names=(*NEVER, *ONLY_TO_RUN, "pydantic"), cwd=tmp_path) == []


def test_a_commands_help_loads_neither_the_kernel_nor_any_heavy_library(tmp_path: Path) -> None:
    # (typer itself checks a command's options with pydantic)
    assert loaded("run", "--help", names=NEVER + ONLY_TO_RUN, cwd=tmp_path) == []


def test_a_scripted_run_in_a_pipe_loads_no_library_it_does_not_use(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    args = ("run", REQUEST, "--config", DEMO_CONFIG, "--no-durable", "--log-file", log)

    assert loaded(*args, names=NEVER, cwd=tmp_path) == []
    assert log.read_text().count('"event":"llm_call"') >= 1


TEXTS = [
    "plain",
    "✓ s1 complete (tool): 15",
    "a\tb\tc",
    "trailing tab\t",
    "multi\nline\twith\ttabs\n",
    "",
    "  indented ⚠",
    "wide 漢字\tafter a tab",
    "\x1b[31mnot red\r\x07",
    "bidi \u202eevil",
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_line_written_without_rich_is_what_rich_writes_where_it_adds_no_colour(text: str) -> None:
    ours, theirs = io.StringIO(), io.StringIO()
    Lines(ours)(text)
    Console(file=theirs, highlight=False, markup=False, emoji=False, soft_wrap=True).print(terminal_safe(text))

    assert ours.getvalue() == theirs.getvalue()
