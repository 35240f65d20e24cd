"""The `aeon` command line: thin — parse, call one use case, render, map errors to exit codes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from aeon.adapters.process import exit_now, guarded_stdout
from aeon.domain.text import request_problem, terminal_safe
from aeon.entrypoints.durable.cli import register_durable_commands
from aeon.entrypoints.failures import EXIT_INVALID, EXIT_OK, EXIT_OUTPUT, JsonAwareCommand, fail, reported, say
from aeon.entrypoints.run_command import (
    DurableOpt,
    HistoryOpt,
    JsonDocOpt,
    LogFileOpt,
    MaxCallsOpt,
    MaxCostOpt,
    PlanOpt,
    QuietOpt,
    RequestArg,
    ThreadOpt,
    TtlOpt,
)
from aeon.entrypoints.schedule import schedule_app
from aeon.entrypoints.schema import schema_app
from aeon.entrypoints.serve.command import serve_app
from aeon.entrypoints.threads import threads_app
from aeon.entrypoints.ui.command import ui

# Each command imports what it uses when it runs: `aeon --version` and `aeon --help` load typer and these few
# modules only (tests/entrypoints/test_cli_start.py), and no command pays for another's libraries.

app = typer.Typer(
    help="Aeon: turn a request into a declarative JSON plan, run it step by step under a budget, and log every cycle.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: flags without a '<bool>' placeholder, errors without boxes
)

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="YAML config layered over the built-in base config (default: the local model).",
        show_default=False,
    ),
]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")]


def _print_version(wanted: bool) -> None:
    if wanted:
        from importlib import metadata

        try:
            typer.echo(f"aeon {metadata.version('aeon')}")
        except metadata.PackageNotFoundError:  # running from a source tree that was never installed
            typer.echo("aeon (version unknown: not installed)")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Aeon: turn a request into a declarative JSON plan, run it step by step under a budget, and log every cycle."""


@app.command(cls=JsonAwareCommand)
def run(
    request: RequestArg,
    config: ConfigOpt = None,
    plan: PlanOpt = None,
    ttl: TtlOpt = None,
    max_llm_calls: MaxCallsOpt = None,
    max_cost: MaxCostOpt = None,
    as_json: JsonDocOpt = False,
    log_file: LogFileOpt = None,
    history: HistoryOpt = None,
    quiet: QuietOpt = False,
    durable: DurableOpt = None,
    thread: ThreadOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Plan REQUEST (or load --plan), execute it step by step, and print every step's output.

    A tool call that needs approval is asked about on the terminal; with no terminal (or --json) the run waits
    durably on the record for `aeon approve RUN_ID` / `aeon deny RUN_ID` from any process.

    Exit codes: 0 completed, 2 bad usage/config/input, 3 TTL, budget or approval time expired (result still
    printed), 4 unrecoverable error (structured error printed) or failed: no step succeeded, or the last step or last
    tool step did not complete (result still printed), 5 unverified: a tool step's tool never ran and LLM
    text stands in its place (result still printed), 6 awaiting approval (the run waits on the record), 7 denied (a
    person denied a tool call the run needed: which, by whom and why is printed).
    """
    from aeon.adapters.console import ConsoleProgress
    from aeon.application.errors import InputError
    from aeon.application.runs import run_overrides
    from aeon.entrypoints.config.layers import load_settings
    from aeon.entrypoints.container import build_container, tools_opened
    from aeon.entrypoints.render import present
    from aeon.entrypoints.run_command import ran

    if (bad := request_problem(request)) is not None:
        raise fail(bad, code=InputError.code, as_json=as_json)
    log = str(log_file) if log_file is not None else None
    overrides = run_overrides(ttl=ttl, max_llm_calls=max_llm_calls, max_cost=max_cost, log_file=log)
    progress, status = (None, None) if quiet else (ConsoleProgress(sys.stderr, verbose=not as_json), say)
    with reported(as_json=as_json, debug=debug):
        settings = load_settings(config, overrides)
        container = build_container(settings, progress=progress, status=status)
        # load tool modules and start MCP servers now: a broken one is a usage error before the run
        with tools_opened(container) as registry:
            result, received = ran(
                container, registry, request=request, plan=plan, durable=durable, as_json=as_json, history=history,
                config=config, overrides=overrides, progress=progress, status=status, thread=thread,
            )  # fmt: skip
    present(result, as_json=as_json, history=history, received=received, redactor=container.redactor())


@app.command()
def validate(
    plan_file: Annotated[Path, typer.Argument(help="A JSON or YAML plan.")],
    config: ConfigOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Check a plan file: every problem a run would find, with its step id. Exit 0 valid, 1 invalid, 2 unreadable."""
    from aeon.adapters.documents import read_document
    from aeon.application.views.result import counted
    from aeon.entrypoints.config.layers import load_settings
    from aeon.entrypoints.session import plan_report

    with reported(debug=debug):
        settings = load_settings(config)
        problems, warnings = plan_report(settings, read_document(plan_file, what="plan"))
    for w in warnings:  # the exit code stays the plan's validity: a warning is what a run would ask approval for
        typer.echo(terminal_safe(f"aeon: warning: {plan_file}: {w}"), err=True)
    if not problems:
        typer.echo(terminal_safe(f"{plan_file}: valid"))
        raise typer.Exit(EXIT_OK)
    for p in problems:
        typer.echo(terminal_safe(f"{plan_file}: {p}"))
    typer.echo(counted(len(problems), "problem"), err=True)
    raise typer.Exit(EXIT_INVALID)


@app.command(cls=JsonAwareCommand)
def tools(
    config: ConfigOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the tools as one JSON document.")] = False,
    debug: DebugOpt = False,
) -> None:
    """List the registered tools: arguments with types, return type, example, description (--json: full schemas)."""
    import msgspec

    from aeon.adapters.console import render_tools
    from aeon.entrypoints.config.layers import load_settings
    from aeon.entrypoints.container import build_container, tools_opened

    with (
        reported(as_json=as_json, debug=debug),
        tools_opened(build_container(load_settings(config), status=say)) as tools,
    ):
        specs = tools.list()
    if as_json:
        typer.echo(msgspec.json.encode([msgspec.to_builtins(s) for s in specs]).decode())
        return
    render_tools(specs, sys.stdout)


@app.command(cls=JsonAwareCommand)
def inspect(
    history_file: Annotated[Path, typer.Argument(help="A history written by `aeon run --history`.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the analysed history as one JSON document.")] = False,
) -> None:
    """Show a run's passes, phases with timings, plans, refinements, scores and patterns across passes."""
    import json

    from aeon.adapters.documents import MAX_HISTORY_BYTES, MAX_HISTORY_DEPTH, MAX_HISTORY_VALUES, read_document
    from aeon.application.views.inspection import analyse, redacted
    from aeon.application.views.inspection_text import inspection_text
    from aeon.entrypoints.secrets import redactor_for

    with reported(as_json=as_json):
        doc = read_document(
            history_file,
            what="history",
            max_bytes=MAX_HISTORY_BYTES,
            max_depth=MAX_HISTORY_DEPTH,
            max_values=MAX_HISTORY_VALUES,
        )
        report = analyse(redacted(doc, redactor_for(None)))  # a history from elsewhere may hold secrets
    if as_json:
        typer.echo(json.dumps(report, indent=2, default=str))  # ASCII only: every control character escaped
    else:
        sys.stdout.write(terminal_safe(inspection_text(report)))


@app.command()
def mcp(
    config: ConfigOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines on stderr.")] = False,
    debug: DebugOpt = False,
) -> None:
    """Serve Aeon to an MCP client over stdin/stdout, with the tools run, validate, runs and resume.

    The client starts the server itself: add it to the client's configuration, e.g. Claude Desktop's
    claude_desktop_config.json or a project's .mcp.json (command: the aeon on PATH, or the full path of
    .venv/bin/aeon; a provider key goes in env). The client chooses the working directory: give the config's
    log.path (and durable.database_url, for durable runs) as absolute paths.

    \b
    {
      "mcpServers": {
        "aeon": {
          "command": "aeon",
          "args": ["mcp", "--config", "/absolute/path/to/aeon.yaml"],
          "env": {"OPENAI_API_KEY": "<your key>"}
        }
      }
    }

    Each call answers with the structured result of aeon run --json, validate or runs --json, redacted like them;
    a run that expires or fails is still a result (its status says so), bad arguments are an error result. Runs keep
    the config's caps: a call may lower ttl and max_llm_calls, never raise them. Only the protocol goes to stdout;
    progress goes to stderr and, when the client asks for it, to the client. Closing stdin (or cancelling a call)
    ends a run in flight as interrupted, on the record; a durable one is cancelled, and aeon resume finishes it.
    """
    with reported(debug=debug):
        try:
            from aeon.entrypoints.mcp_server import serve
        except ImportError as exc:  # the SDK is a dependency: a broken install
            raise fail(f"aeon mcp needs the MCP SDK ({exc}): pip install 'mcp>=2.3'") from None
        code = serve(config, quiet=quiet, debug=debug)
    raise typer.Exit(code)


register_durable_commands(app)
app.add_typer(schema_app, name="schema")
app.add_typer(threads_app, name="threads")
app.add_typer(schedule_app, name="schedule")
app.command()(ui)
app.add_typer(serve_app, name="serve")


def main() -> None:
    guarded_stdout(app, failed=EXIT_OUTPUT)


def console() -> None:
    """The `aeon` console script: `main`, then the process ends at once with its exit code (`exit_now`)."""
    try:
        main()
    except SystemExit as done:
        if isinstance(done.code, str):  # as the interpreter does: the text on stderr, exit 1
            print(done.code, file=sys.stderr)
        exit_now(done.code if isinstance(done.code, int) else 1 if done.code else 0)
    exit_now(0)
