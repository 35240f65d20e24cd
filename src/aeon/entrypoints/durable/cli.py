"""The durable commands — `aeon runs`, `resume`, `replay`, `batch`, `worker` — and a durable `aeon run` (the default).

DBOS is imported only when one of them runs, so the other commands start as fast as before.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import msgspec
import typer

from aeon.entrypoints.failures import (
    EXIT_AWAITING,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    JsonAwareCommand,
    fail,
    reported,
)
from aeon.entrypoints.stdout import exit_now, reader_may_stop, second_signal_leaves
from aeon.entrypoints.terminal import json_safe, terminal_safe

if TYPE_CHECKING:  # the kernel, the settings schema and the container load when a command runs, not for --help
    from aeon.adapters.tools.composite import CompositeTools
    from aeon.application.ports import ApproverPort, ProgressPort
    from aeon.application.results import RunResult
    from aeon.domain.approval import Pending
    from aeon.domain.history import ExecutionHistory
    from aeon.domain.plan import Plan
    from aeon.domain.run_state import RunState
    from aeon.entrypoints.settings import Settings

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="YAML config (for the system database: durable.database_url).", show_default=False
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")]
HistoryOpt = Annotated[Path | None, typer.Option("--history", help="Write the execution history here.")]


def _say(message: str) -> None:
    typer.echo(f"aeon: {terminal_safe(message)}", err=True)


def run_durable(
    settings: Settings,
    config: Path | None,
    overrides: dict[str, Any],
    request: str,
    plan: Plan | None,
    *,
    progress: ProgressPort | None,
    inline: ApproverPort | None = None,
    show_waiting: Callable[[RunResult], None] | None = None,
    tools: CompositeTools | None = None,
) -> RunResult:
    """A durable `aeon run` (the default): the run as a DBOS workflow in this process. A crash (or Ctrl-C, SIGTERM,
    SIGKILL) leaves it on the record, where `aeon resume RUN_ID` finishes it. A tool call that needs approval is asked
    about on this terminal (`inline`); with nobody to ask, `show_waiting` shows the run awaiting approval and the
    process leaves it waiting on the record (exit 6) for `aeon approve` / `aeon deny` from any process. `tools`:
    those the command already started (its MCP servers), lent to the run so that they start once."""
    from aeon.adapters.durable.runs import DbosRuns
    from aeon.entrypoints.durable import compose

    encoded = msgspec.json.encode(plan).decode() if plan is not None else None
    spec = compose.spec_for(request, config, overrides, log_path=settings.log.path, plan=encoded)
    compose.composer().settle(spec, settings)  # loaded once: the run executes here from the command's settings
    with (
        compose.composer().lent_tools(settings, tools) if tools is not None else nullcontext(),
        compose.engine_for(settings, "run") as engine,
        stoppable(f"run {spec.run_id} is on the record; finish it with: aeon resume {spec.run_id}"),
    ):
        _say(f"durable run {spec.run_id} (after a crash: aeon resume {spec.run_id})")  # also with -q: it is needed
        outcome = DbosRuns(engine).start(
            spec.run_id,
            spec.request,
            plan=spec.plan,
            config=spec.config,
            overrides=spec.overrides,
            progress=progress,
            approver=inline,
            leave_when_waiting=show_waiting is not None,
        )
        if outcome.awaiting is not None and show_waiting is not None:
            waiting = awaiting_result(spec.run_id, spec.request, outcome.awaiting, outcome.state, settings)
            leave_waiting(lambda: show_waiting(waiting))
    assert outcome.result is not None
    return outcome.result


def awaiting_result(
    run_id: str, request: str, pending: Pending, state: RunState | None = None, settings: Settings | None = None
) -> RunResult:
    """The result a run waiting for a decision shows: the plan and budget so far, and the call it waits on; with the
    run's `state` (known to the process it waits in) its history so far, which --history writes."""
    from aeon.application.results import BudgetReport, RunResult, RunStatus
    from aeon.domain.history import step_results
    from aeon.domain.records import Counters

    plan = pending.plan
    return RunResult(
        status=RunStatus.AWAITING_APPROVAL,
        correlation_id=run_id,
        request=request,
        plan=plan,
        outputs=step_results(plan) if plan is not None else {},
        budget=BudgetReport.of(pending.budget, cost=None),
        counts=state.counters if state is not None else Counters(),
        pending_approval=pending.request,
        history=waiting_history(state, settings) if state is not None and settings is not None else None,
    )


def waiting_history(state: RunState, settings: Settings) -> ExecutionHistory:
    """The execution history of a run that waits for a decision: its passes so far (the one under way too), its
    statistics, and `result_type` awaiting_approval."""
    from aeon.domain.history import ExecutionHistory, FinalResult, OverallStatistics, RunConfiguration
    from aeon.entrypoints.container import kernel_settings

    run, spent = kernel_settings(settings), state.budget
    passes = [*state.passes, *([state.current] if state.current is not None else [])]
    return ExecutionHistory(
        execution_id=state.correlation_id,
        task_input=state.request,
        configuration=RunConfiguration(
            ttl=spent.limits.ttl,
            max_llm_calls=spent.limits.max_llm_calls,
            evaluate=run.evaluate,
            convergence_criteria=run.criteria,
            adaptive_depth_settings={"ttl_cap": spent.limits.ttl},
        ),
        passes=passes,
        final_result=FinalResult(result_type="awaiting_approval"),
        overall_statistics=OverallStatistics(
            total_passes=len(passes),
            total_time_seconds=round(spent.elapsed_seconds, 6),
            llm_calls=spent.llm_calls,
            prompt_tokens=spent.prompt_tokens,
            completion_tokens=spent.completion_tokens,
            cached_tokens=spent.cached_tokens,
        ),
        profiles=list(state.profiles),
        advisories=list(state.advisories),
        approvals=list(state.approvals),
    )


@contextmanager
def stoppable(what_stays: str) -> Iterator[None]:
    """Ctrl-C or SIGTERM while runs execute in this process: say `what_stays` and stop as a crash would."""
    received: list[int] = []

    def stop(signum: int, _: Any) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except KeyboardInterrupt:
        code = 128 + received[0] if received else EXIT_INTERRUPTED
        second_signal_leaves(code)
        _say(f"stopped: {what_stays}")
        leave_pending(code)
    finally:
        signal.signal(signal.SIGTERM, previous)


def leave_pending(code: int) -> NoReturn:
    """Stop the process now, as a crash would, leaving the run pending on the record for `aeon resume`.

    Shutting DBOS down instead would cancel the run, and DBOS records a cancelled run started from this thread as
    failed (not resumable); ending it the kernel's way would write it off as interrupted. The exit hooks still run
    (a local model's server is stopped); the log and the recorded steps are already on disk.
    """
    exit_now(code)


def leave_waiting(show: Callable[[], None]) -> NoReturn:
    """`show` a run that waits for a decision, then leave it waiting on the record (leave_pending) with the exit code
    showing it gave (6, awaiting approval, unless it said otherwise)."""
    try:
        show()
    except typer.Exit as shown:
        leave_pending(shown.exit_code)
    leave_pending(EXIT_AWAITING)


def _settings(config: Path | None) -> Settings:
    from aeon.entrypoints.container import load_settings

    return load_settings(config)


def runs(config: ConfigOpt = None, as_json: JsonOpt = False, debug: DebugOpt = False) -> None:
    """List recorded durable runs, newest first: id, request, status, passes, LLM calls, tokens, start, duration.

    Status: completed, ttl_expired, error, denied (as aeon run); stopped (a non-idempotent tool call was cut off:
    aeon resume ID --rerun-unsafe, or --mark-done --output JSON); running (its process is alive: its pid on this
    host, or a batch's or worker's heartbeat); interrupted (cut off by a crash or Ctrl-C, its process gone: aeon
    resume ID); pending (unfinished, its process on another host: running, or cut off); awaiting_approval (a tool
    call waits for a person: aeon approve ID / aeon deny ID --reason TEXT); queued (a batch run not started yet);
    failed or cancelled (DBOS could not finish it).
    """
    reader_may_stop()
    with reported(as_json=as_json, debug=debug):
        from aeon.adapters.durable import status as listing
        from aeon.adapters.durable.rows import RunRow, run_lines
        from aeon.entrypoints.durable import compose
        from aeon.entrypoints.secrets import redactor_for

        settings = _settings(config)
        with compose.engine_for(settings, "runs") as engine:
            rows = [redactor_for(settings).struct(row, RunRow) for row in listing.list_runs(engine)]
    if as_json:
        typer.echo(json_safe(msgspec.json.encode(rows).decode()))
        return
    if not rows:
        typer.echo("no durable runs recorded yet (aeon run records each run unless --no-durable)")
        return
    for line in run_lines(rows):
        typer.echo(line)


def resume(
    run_id: Annotated[str, typer.Argument(help="The id of an interrupted durable run (aeon runs lists them).")],
    config: ConfigOpt = None,
    rerun_unsafe: Annotated[
        bool,
        typer.Option("--rerun-unsafe", help="Run again a non-idempotent tool call that a crash cut off."),
    ] = False,
    mark_done: Annotated[
        bool,
        typer.Option(
            "--mark-done", help="The cut-off call did have its effect: take --output as its result, never run it."
        ),
    ] = False,
    output: Annotated[
        str | None, typer.Option("--output", help="With --mark-done: what the tool returned, as JSON.")
    ] = None,
    output_file: Annotated[
        Path | None, typer.Option("--output-file", help="With --mark-done: a file holding that JSON.")
    ] = None,
    as_json: JsonOpt = False,
    history: HistoryOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Finish an interrupted durable run: recorded LLM and tool calls are not made again; the log goes on.

    Exit codes as for aeon run; 4 with a structured error when a non-idempotent tool call was in flight: check its
    effect, then --rerun-unsafe (it did not happen) or --mark-done --output JSON (it did; recorded as operator-given).
    """
    with reported(as_json=as_json, debug=debug):
        from aeon.adapters.durable import ops as ops
        from aeon.entrypoints.durable import compose

        given = _given(mark_done, output, output_file, rerun_unsafe=rerun_unsafe)
        stays = f"run {run_id} is on the record; finish it with: aeon resume {run_id}"
        settings = _settings(config)
        with compose.engine_for(settings, "resume") as engine, stoppable(stays):
            outcome = ops.resume(engine, run_id, rerun_unsafe=rerun_unsafe, given=given)
            _leave_if_waiting(engine, run_id, outcome, as_json=as_json, settings=settings, history=history)
    _present(outcome, as_json=as_json, history=history, settings=settings)


def _leave_if_waiting(
    engine: Any, run_id: str, outcome: Any, *, as_json: bool, settings: Settings, history: Path | None
) -> None:
    """A run that waits (again) for a decision: shown as awaiting approval (its history so far written to
    `history`), and left waiting on the record (exit 6: the engine is not shut down, which would cancel it)."""
    from aeon.entrypoints.render import present
    from aeon.entrypoints.secrets import redactor_for

    if outcome.awaiting is None:
        return
    waiting = recorded_awaiting(engine, run_id, outcome.awaiting, outcome.state, settings)
    leave_waiting(lambda: present(waiting, as_json=as_json, history=history, redactor=redactor_for(settings)))


def recorded_awaiting(
    engine: Any, run_id: str, pending: Pending, state: RunState | None = None, settings: Settings | None = None
) -> RunResult:
    """`awaiting_result` for a run on the record, its request read from its recorded input."""
    from aeon.adapters.durable.runtime import RunSpec

    found = engine.client.list_workflows(workflow_ids=[run_id], load_output=False)
    request = msgspec.json.decode(found[0].input["args"][0], type=RunSpec).request if found else ""
    return awaiting_result(run_id, request, pending, state, settings)


RunIdArg = Annotated[str, typer.Argument(help="The id of a durable run awaiting approval (aeon runs lists them).")]
ByOpt = Annotated[
    str | None, typer.Option("--by", help="Who decides, for the record (default: your user name).", show_default=False)
]
SendOnlyOpt = Annotated[
    bool,
    typer.Option(
        "--send-only",
        help="Only record the decision: the process that holds the run, or a later aeon resume, goes on with it.",
    ),
]


def approve(
    run_id: RunIdArg,
    args: Annotated[
        str | None,
        typer.Option("--args", help="Run the call with these arguments instead (a JSON object, checked first)."),
    ] = None,
    by: ByOpt = None,
    send_only: SendOnlyOpt = False,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    history: HistoryOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Approve the tool call a durable run waits on, as it was asked or with edited --args, and go on with the run
    here (from any process that shares the database). No LLM call on the record is made again.

    Exit codes: those of aeon run for the run's ending (6 when it waits again, on its next call); 2 when the run
    waits on nothing or the edited arguments do not fit the tool's schema (nothing is sent then).
    """
    from aeon.domain.approval import ApprovalDecision, Verdict

    with reported(as_json=as_json, debug=debug):  # --args that are no JSON object: exit 2 in one line
        decision = ApprovalDecision(verdict=Verdict.APPROVE, by=by or user_name(), args=edited_args(args))
    _decide(run_id, decision, send_only=send_only, config=config, as_json=as_json, history=history, debug=debug)


def deny(
    run_id: RunIdArg,
    reason: Annotated[
        str, typer.Option("--reason", help="Why the call must not be made (recorded, shown to the run).")
    ],
    by: ByOpt = None,
    send_only: SendOnlyOpt = False,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    history: HistoryOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Deny the tool call a durable run waits on, with a reason, and go on with the run here: the step fails as
    denied, the evaluation sees why, and a refinement may not plan the same call again.

    Exit codes as for aeon approve.
    """
    from aeon.application.errors import InputError
    from aeon.domain.approval import ApprovalDecision, Verdict

    with reported(as_json=as_json, debug=debug):
        if not reason.strip():  # as the web view: the run, its evaluation and the record show why
            raise InputError("a denial needs a reason (--reason TEXT): the run and its evaluation see it")
        decision = ApprovalDecision(verdict=Verdict.DENY, by=by or user_name(), reason=reason.strip())
    _decide(run_id, decision, send_only=send_only, config=config, as_json=as_json, history=history, debug=debug)


def _decide(
    run_id: str,
    decision: Any,
    *,
    send_only: bool,
    config: Path | None,
    as_json: bool,
    history: Path | None,
    debug: bool,
) -> None:
    with reported(as_json=as_json, debug=debug):
        from aeon.adapters.durable import ops as ops
        from aeon.entrypoints.durable import compose

        settings = _settings(config)
        stays = f"run {run_id} is on the record; finish it with: aeon resume {run_id}"
        with compose.engine_for(settings, "resume") as engine, stoppable(stays):
            outcome = ops.answer(engine, run_id, decision, go_on=not send_only)
            if outcome is None:
                said = "approved" if decision.approved else "denied"
                _say(f"{said}: run {run_id} goes on in the process that holds it, or with: aeon resume {run_id}")
                raise typer.Exit(EXIT_OK)
            _leave_if_waiting(engine, run_id, outcome, as_json=as_json, settings=settings, history=history)
    _present(outcome, as_json=as_json, history=history, settings=settings)


def edited_args(text: str | None, what: str = "--args") -> dict[str, Any] | None:
    """The edited arguments of an approval (`what` names where they came from); InputError for no JSON object."""
    from aeon.application.errors import InputError

    if text is None:
        return None
    if len(text) > 1024 * 1024:
        raise InputError(f"{what} is over 1 MiB")
    try:
        value = json.loads(text, object_pairs_hook=_once_each)
    except RecursionError:
        raise InputError(f"{what} is nested too deeply to read as JSON") from None
    except _Twice as exc:
        raise InputError(f"{what} names {exc.args[0]!r} twice: give each argument once") from None
    except ValueError as exc:
        raise InputError(f"{what} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InputError(f"{what} must be a JSON object (the tool's arguments by name)")
    return value


class _Twice(Exception):
    """A JSON object that names a key twice (json.loads would keep the last silently)."""


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Twice(key)
        found[key] = value
    return found


def user_name() -> str:
    """Who decides, for the record, when nobody says: the user name of this process."""
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # no user name to be found (a container without one)
        return "operator"


def _given(mark_done: bool, output: str | None, output_file: Path | None, *, rerun_unsafe: bool) -> Any:
    """The operator's output for `--mark-done` (a durable_ops.Given), or None; InputError for a bad combination."""
    from aeon.adapters.durable.ops import Given
    from aeon.application.errors import InputError

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


def _present(outcome: Any, *, as_json: bool, history: Path | None, settings: Settings) -> None:
    from aeon.entrypoints.render import present
    from aeon.entrypoints.secrets import redactor_for

    if outcome.stopped is not None:
        stop = outcome.stopped
        raise fail(stop.message, EXIT_ERROR, code=stop.code, as_json=as_json)
    present(outcome.result, as_json=as_json, history=history, redactor=redactor_for(settings))


def replay(
    run_id: Annotated[str, typer.Argument(help="The durable run to fork.")],
    from_pass: Annotated[int, typer.Option("--from-pass", help="The pass to go on from (1 = from the start).")],
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", "-c", help="The config from that pass on (default: the run's own).", show_default=False
        ),
    ] = None,
    as_json: JsonOpt = False,
    history: HistoryOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Fork a durable run at the start of pass N: the passes before are taken from its record (no call made again),
    and from pass N on the model and config of --config answer. Both runs stay listed by aeon runs."""
    with reported(as_json=as_json, debug=debug):
        from aeon.adapters.durable import ops as ops
        from aeon.entrypoints.durable import compose

        settings = _settings(config)
        with compose.engine_for(settings, "replay") as engine, stoppable("the replay is on the record (aeon runs)"):
            outcome = ops.replay(engine, run_id, from_pass, config)
            assert outcome.result is not None
            _say(f"replay of {run_id} from pass {from_pass}: run {outcome.result.correlation_id}")
    _present(outcome, as_json=as_json, history=history, settings=settings)


def batch(
    file: Annotated[Path, typer.Argument(help='A JSONL file: one {"request": "..."} per line.')],
    config: Annotated[Path | None, typer.Option("--config", "-c", help="YAML config for every run.")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Most runs at once, all workers.")] = 4,
    rate: Annotated[float | None, typer.Option("--rate", min=0.1, help="Most runs started per minute.")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Results, one per line (default FILE.results.jsonl).")
    ] = None,
    serve: Annotated[
        bool, typer.Option("--serve/--no-serve", help="Run requests in this process too (else only aeon worker).")
    ] = True,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Run every line again as new runs, though this file ran before.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary on stdout (runs, reused, …).")] = False,
    debug: DebugOpt = False,
) -> None:
    """Queue one durable run per line and wait for all; progress on stderr (done, running, failed, tokens, ETA).

    Killed and started again with the same file, it goes on where it stopped: finished runs are not run again (their
    results are reused, and it says so); --fresh runs the file again. Exit 0 when every run finished without error,
    4 otherwise (the results say which), 6 when none failed but some wait for approval (they wait on the record, for
    aeon approve / aeon deny; the others' results are written).
    """
    import asyncio
    import contextlib

    from aeon.adapters.durable import batch as queued
    from aeon.adapters.durable import ops as ops
    from aeon.adapters.durable.engine import BATCH_QUEUE, QueueLimits
    from aeon.entrypoints.container import build_container, tools_opened
    from aeon.entrypoints.durable import batch as b
    from aeon.entrypoints.durable import compose
    from aeon.entrypoints.render import result_document

    with reported(as_json=as_json, debug=debug):
        settings = _settings(config)
        requests = b.read_requests(file)
        bid = b.batch_id(file, requests)
        target = out or file.with_name(file.stem + ".results.jsonl")
        listen = (BATCH_QUEUE,) if serve else ("aeon-none",)
        limits = {BATCH_QUEUE: QueueLimits(concurrency=concurrency, per_minute=rate)}
        name, reused, going_on = queued.name_for(compose.system_database(settings), bid, len(requests), fresh=fresh)
        again = "again without --fresh" if fresh else "the same command again"
        stays = f"batch {name} is on the record; start {again} to go on"
        container = build_container(settings)
        with contextlib.ExitStack() as stack:
            # the tools load (their MCP servers start) and the model and log are checked before anything is queued
            # or taken from the queue; the runs executed here use those tools
            registry = stack.enter_context(tools_opened(container))
            stack.enter_context(compose.composer().lent_tools(settings, registry))
            asyncio.run(b.checked(container, name, len(requests)))
            engine = stack.enter_context(
                compose.engine_for(settings, "batch", name=name, listen=listen, queues=limits, lease=serve)
            )
            stack.enter_context(stoppable(stays))
            log_path = settings.log.path
            ids = queued.enqueue(
                name, requests, lambda r: compose.spec_for(r, config, {}, log_path=log_path, plan=None)
            )
            _say(f"batch {name}: {len(ids)} runs on queue {BATCH_QUEUE} (concurrency {concurrency})")
            if reused:
                _say(
                    f"batch {name}: {reused} of {len(ids)} runs already finished when this file ran before: their "
                    f"results are reused, not run again (to run the file again: aeon batch {file} --fresh)"
                )
            if going_on:
                _say(f"batch {name}: {going_on} runs started before go on where they stopped")
            tally = queued.Tally(engine, ids, result_document)
            b.watch(tally, sys.stderr)
            b.write_results(tally, target)
            if tally.awaiting:  # they wait on the record: leave without shutting the engine down (it would cancel them)
                _say(f"{len(ids)} results in {target}; {len(tally.awaiting)} runs await approval")
                engine.leave()
                leave_pending(EXIT_AWAITING if not tally.failed else EXIT_ERROR)
        _say(f"{len(ids)} results in {target}")
    if as_json:
        summary = {"batch": name, "runs": len(ids), "failed": tally.failed, "reused": reused, "results": str(target)}
        typer.echo(json.dumps(summary))
    raise typer.Exit(EXIT_OK if not tally.failed else EXIT_ERROR)


def worker(
    config: ConfigOpt = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="This worker's stable name: started again, it takes its cut-off runs back."),
    ] = None,
    debug: DebugOpt = False,
) -> None:
    """Serve the batch queue from this process (or host) until Ctrl-C or SIGTERM. It keeps a lease in the system
    database and takes over the runs of a batch or worker process unheard for durable.recover_after_seconds."""
    import socket

    from aeon.adapters.durable import ops as ops
    from aeon.adapters.durable.engine import BATCH_QUEUE, QueueLimits, redacted
    from aeon.entrypoints.durable import compose

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with reported(debug=debug):
        settings = _settings(config)
        serving = {BATCH_QUEUE: QueueLimits()}
        host = name or socket.gethostname()
        with compose.engine_for(
            settings, "worker", name=host, listen=(BATCH_QUEUE,), queues=serving, lease=True
        ) as engine:
            _say(f"worker {engine.executor_id} serving {BATCH_QUEUE} on {redacted(engine.url)}")
            stop.wait()
            # runs under way stay pending: this worker started again under its name takes them back at once, any
            # other live worker once its lease has expired
            _say("worker stopped")
            leave_pending(EXIT_OK)


def register_durable_commands(app: typer.Typer) -> None:
    app.command(cls=JsonAwareCommand)(runs)
    app.command(cls=JsonAwareCommand)(resume)
    app.command(cls=JsonAwareCommand)(replay)
    app.command(cls=JsonAwareCommand)(approve)
    app.command(cls=JsonAwareCommand)(deny)
    app.command()(batch)
    app.command()(worker)
