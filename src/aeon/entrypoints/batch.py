"""`aeon batch FILE`: several requests, one after the other, in one process with one model client.

The runs share the container's LLM adapter, so the local model's llama-server starts once and stays warm for the
whole batch: its KV cache keeps the prompt prefixes every run shares (the preamble, the few-shot blocks) and serves
them to every later run. Each run is a run of its own: its own correlation id, budget (run.max_cost and the other
caps hold per run), ledger and result. Stdout gets one JSON result document per line.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated

import msgspec
import typer

from aeon.application.errors import InputError
from aeon.application.result import RunResult, RunStatus
from aeon.entrypoints.cli import ConfigOpt, DebugOpt, app
from aeon.entrypoints.container import Container, build_container, load_settings, preflight
from aeon.entrypoints.failures import EXIT_ERROR, EXIT_EXPIRED, EXIT_OK, fail, reported
from aeon.entrypoints.render import result_document


def read_requests(path: Path) -> list[str]:
    """One request per line; blank lines and lines starting with # are skipped."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    requests = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not requests:
        raise InputError(f"{path} holds no request (one per line)")
    return requests


async def _batch(container: Container, requests: list[str], quiet: bool) -> list[RunResult]:
    llm, log = container.llm(), container.event_log()
    results: list[RunResult] = []
    try:
        for i, request in enumerate(requests, 1):
            result = await container.orchestrator().run(request)
            results.append(result)
            sys.stdout.write(msgspec.json.encode(result_document(result)).decode() + "\n")
            sys.stdout.flush()
            if not quiet:
                typer.echo(f"aeon: {i}/{len(requests)} {result.status.value}: {request}", err=True)
    finally:
        await llm.aclose()
        container.tracer().shutdown()
        log.close()
    return results


@app.command()
def batch(
    requests_file: Annotated[Path, typer.Argument(help="Requests, one per line (# starts a comment line).")],
    config: ConfigOpt = None,
    log_file: Annotated[Path | None, typer.Option("--log-file", help="Append the JSONL event log here.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines on stderr.")] = False,
    debug: DebugOpt = False,
) -> None:
    """Run every request of REQUESTS_FILE in one process (the local model stays warm); one JSON result per line.

    Exit codes: 0 all completed, 3 some stopped by the TTL or a cap, 4 some ended in error, 2 bad usage or input.
    """
    overrides = {"log.path": str(log_file)} if log_file is not None else {}
    with reported(as_json=True, debug=debug):
        requests = read_requests(requests_file)
        container = build_container(load_settings(config, overrides))
        container.tools()
        if problem := preflight(container):
            raise fail(problem, code="AEON.SETUP", as_json=True)
        container.event_log().open()
        results = asyncio.run(_batch(container, requests, quiet))
    statuses = {r.status for r in results}
    if statuses & {RunStatus.ERROR, RunStatus.INTERRUPTED}:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_EXPIRED if RunStatus.TTL_EXPIRED in statuses else EXIT_OK)
