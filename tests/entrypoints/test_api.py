"""aeon.run and aeon.arun: one call to a typed result — the `aeon run --json` document's fields — built through the
CLI's settings and container; errors before the run are typed AeonErrors with one-line messages."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import msgspec
import pytest

import aeon
from aeon import testing
from aeon.adapters.tools import tool_definition
from aeon.application.views.result import result_document
from aeon.domain.plan import Plan

from cli_harness import DEMO_CONFIG, REQUEST, SUM_STEP, assert_exit, invoke, records

pytestmark = pytest.mark.usefixtures("isolated_env")

SUM_SCRIPT = DEMO_CONFIG.parent / "scripts" / "sum-5-and-10.yaml"
ONE_PASS = {"run": {"evaluate": False}}
WEATHER_STEP = {"step_id": "s1", "description": "Look it up", "tool": "weather", "args": {"city": "Paris"}}


@aeon.tool
def weather(city: str) -> str:
    """Today's weather for a city."""
    return f"sunny in {city}"


class Notebook(aeon.Toolset):
    """Notes kept for a run."""

    def __init__(self) -> None:
        self._notes: dict[str, str] = {}

    def write_note(self, title: str, text: str) -> str:
        """Save a note under a title."""
        self._notes[title] = text
        return f"saved {title}"


def planned(*steps: dict[str, Any]) -> testing.FunctionLLM:
    """A model whose one answer is a plan of `steps` (evaluation is off: one plan → execute pass)."""
    return testing.answers(json.dumps({"goal": "test", "steps": list(steps)}))


def steady(doc: Any) -> Any:
    """The document without what differs between two runs of the same script: the run id and the seconds."""
    if isinstance(doc, dict):
        return {k: steady(v) for k, v in doc.items() if k not in ("correlation_id", "seconds")}
    if isinstance(doc, list):
        return [steady(v) for v in doc]
    return doc


# -- the result -----------------------------------------------------------------------------------------------------


def test_the_result_is_the_json_document_of_aeon_run_for_the_same_scripted_run(tmp_path: Path) -> None:
    cli = invoke("run", REQUEST, "--config", DEMO_CONFIG, "--json", "--log-file", tmp_path / "cli.jsonl")
    assert_exit(cli, 0)

    result = aeon.run(REQUEST, config=DEMO_CONFIG, log_file=tmp_path / "api.jsonl")

    assert isinstance(result, aeon.RunResult)
    assert result.status is aeon.RunStatus.COMPLETED and result.outputs["s1"].output == 15
    document = msgspec.json.decode(msgspec.json.encode(result_document(result)))
    assert steady(document) == steady(json.loads(cli.stdout))


def test_the_log_of_a_python_run_is_the_log_of_an_aeon_run(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    result = aeon.run(REQUEST, model=f"scripted:{SUM_SCRIPT}", log_file=log)

    kinds = [r["event"] for r in records(log)]
    assert kinds[0] == "run_start" and kinds[-1] == "run_end"
    assert {r["correlation_id"] for r in records(log)} == {result.correlation_id}


def test_no_log_is_written_with_log_file_false(tmp_path: Path) -> None:
    result = aeon.run(REQUEST, model=f"scripted:{SUM_SCRIPT}", log_file=False)

    assert result.status == "completed"
    assert not (tmp_path / ".aeon").exists()


# -- tools, models, plans -------------------------------------------------------------------------------------------


def test_tools_given_as_functions_are_planned_with_and_called() -> None:
    llm = planned(WEATHER_STEP)

    result = aeon.run("what is the weather in Paris?", tools=[weather], model=llm, config=ONE_PASS)

    assert result.outputs["s1"].output == "sunny in Paris"
    assert "weather" in llm.calls[0].prompt  # the planner was shown the tool


def forecast(city: str, days: int = 1) -> str:
    """The weather for a city over the next days.

    Not marked @aeon.tool: a plain typed function with a docstring.
    """
    return f"sunny in {city} for {days} days"


def test_a_plain_typed_function_with_a_docstring_is_a_tool_derived_as_aeon_tool_derives_it() -> None:
    step = {"step_id": "s1", "description": "Look it up", "tool": "forecast", "args": {"city": "Paris", "days": 2}}
    llm = planned(step)

    result = aeon.run("the weather in Paris for two days?", tools=[forecast], model=llm, config=ONE_PASS)

    assert result.outputs["s1"].output == "sunny in Paris for 2 days"
    twin = types.FunctionType(forecast.__code__, forecast.__globals__, "forecast", forecast.__defaults__)
    twin.__doc__, twin.__annotations__ = forecast.__doc__, forecast.__annotations__
    marked = tool_definition(aeon.tool(twin))
    assert marked is not None
    shown = json.dumps(marked.spec.input_schema)  # the planner sees what it would see of the same function marked
    sent = "".join(message.content for message in llm.calls[0].messages)
    assert "The weather for a city over the next days." in sent and shown in sent
    assert tool_definition(forecast) is None  # the caller's function is left as it was


def test_tools_given_as_a_toolset_instance_are_its_public_methods() -> None:
    step = {"step_id": "s1", "description": "Note it", "tool": "write_note", "args": {"title": "t", "text": "x"}}

    result = aeon.run("note this", tools=[Notebook()], model=planned(step), config=ONE_PASS)

    assert result.outputs["s1"].output == "saved t"


def test_tools_given_as_a_module_are_its_tools() -> None:
    module = types.ModuleType("weather_tools")
    module.weather = weather  # type: ignore[attr-defined]

    result = aeon.run("what is the weather in Paris?", tools=[module], model=planned(WEATHER_STEP), config=ONE_PASS)

    assert result.outputs["s1"].output == "sunny in Paris"


def test_the_built_in_tools_stay_beside_the_tools_given() -> None:
    result = aeon.run(REQUEST, tools=[weather], model=planned(SUM_STEP), config=ONE_PASS)

    assert result.outputs["s1"].output == 15


@pytest.mark.parametrize("kind", ["mapping", "Plan", "file"])
def test_a_plan_given_as_a_mapping_a_plan_or_a_file_runs_without_planning(kind: str, tmp_path: Path) -> None:
    doc = {"goal": "weather", "steps": [WEATHER_STEP]}
    (tmp_path / "plan.json").write_text(json.dumps(doc))
    plan = {"mapping": doc, "Plan": msgspec.convert(doc, Plan), "file": tmp_path / "plan.json"}[kind]
    llm = testing.answers()  # no call is expected

    result = aeon.run("what is the weather in Paris?", tools=[weather], model=llm, plan=plan, ttl=1, config=ONE_PASS)

    assert result.outputs["s1"].output == "sunny in Paris"
    assert llm.calls == []
    if isinstance(plan, Plan):
        assert plan.steps[0].status == "pending"  # the caller's plan is not the one the run changed


def test_the_keyword_caps_override_the_config() -> None:
    result = aeon.run(REQUEST, model=f"scripted:{SUM_SCRIPT}", max_llm_calls=1)

    assert result.status is aeon.RunStatus.TTL_EXPIRED
    assert result.ttl_expiration is not None and result.ttl_expiration.cap == "max_llm_calls"
    assert result.budget.max_llm_calls == 1


def _untyped(city):  # type: ignore[no-untyped-def]
    """A function without type hints."""
    return city


# -- errors before the run ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "says"),
    [
        ({"config": {"run": {"ttl": -1}}}, aeon.ConfigurationError, "at run.ttl"),
        ({"config": "missing.yaml"}, aeon.ConfigurationError, "config file not found: missing.yaml"),
        ({"model": "gpt-4o"}, aeon.ConfigurationError, "unknown provider 'gpt-4o'"),
        ({"model": "openai:gpt-4o-mini"}, aeon.ConfigurationError, "set OPENAI_API_KEY"),
        ({"model": 42}, aeon.UsageError, "model must be a name"),
        ({"tools": [print]}, aeon.ToolRegistrationError, "tool 'print': parameter 'args' must be a named parameter"),
        ({"tools": [lambda city: city]}, aeon.ToolRegistrationError, "tool '<lambda>': has no docstring"),
        ({"tools": [_untyped]}, aeon.ToolRegistrationError, "tool '_untyped': parameter 'city' has no type annotation"),
        ({"tools": [Notebook]}, aeon.ToolRegistrationError, "class Notebook is not a tool"),
        ({"plan": {"goal": "g", "steps": [{**WEATHER_STEP, "tool": "nope"}]}}, aeon.InputError, "'nope'"),
        ({"max_cots": 1}, aeon.UsageError, "unexpected keyword argument 'max_cots'"),
        ({"tools": weather}, aeon.UsageError, r"tools takes a list (tools=[weather])"),
    ],
)
def test_a_bad_call_raises_a_typed_error_with_one_line_before_the_run(
    options: dict[str, Any], error: type[aeon.AeonError], says: str, tmp_path: Path
) -> None:
    with pytest.raises(error) as raised:
        aeon.run(REQUEST, **options)

    message = str(raised.value)
    assert says in message and "\n" not in message
    assert not (tmp_path / ".aeon").exists()  # nothing ran: no log was started


def test_an_empty_request_is_an_input_error() -> None:
    with pytest.raises(aeon.InputError, match="the request is empty"):
        aeon.run("  ", model=f"scripted:{SUM_SCRIPT}")


def test_a_secret_in_an_error_message_is_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_API_KEY", "sk-live-0123456789abcdef")
    plan = tmp_path / "sk-live-0123456789abcdef.json"  # a plan file named after a key, as a message quotes it

    with pytest.raises(aeon.InputError) as raised:
        aeon.run(REQUEST, model=f"scripted:{SUM_SCRIPT}", plan=plan)

    assert "sk-live" not in str(raised.value) and "[REDACTED]" in str(raised.value)


# -- event loops ----------------------------------------------------------------------------------------------------


def test_aeon_run_inside_a_running_event_loop_says_to_await_arun() -> None:
    async def main() -> None:
        aeon.run(REQUEST, model=f"scripted:{SUM_SCRIPT}")

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no coroutine is left never awaited
        with pytest.raises(aeon.UsageError, match=r"running event loop .*use await aeon\.arun"):
            asyncio.run(main())


def test_arun_runs_inside_the_callers_running_loop() -> None:
    async def main() -> tuple[aeon.RunResult, asyncio.AbstractEventLoop, asyncio.AbstractEventLoop]:
        here = asyncio.get_running_loop()
        seen: list[asyncio.AbstractEventLoop] = []

        @aeon.tool
        async def which_loop() -> str:
            """Say which loop runs the tool."""
            seen.append(asyncio.get_running_loop())
            return "this one"

        step = {"step_id": "s1", "description": "which loop", "tool": "which_loop", "args": {}}
        result = await aeon.arun("which loop?", tools=[which_loop], model=planned(step), config=ONE_PASS)
        return result, here, seen[0]

    result, caller, tools = asyncio.run(main())

    assert result.status == "completed" and tools is caller


def test_cancelling_arun_ends_the_run_as_interrupted_on_the_record(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"

    async def main() -> aeon.RunResult:
        started = asyncio.Event()

        @aeon.tool
        async def wait_forever() -> str:
            """Wait until cancelled."""
            started.set()
            await asyncio.Event().wait()
            return "never"

        step = {"step_id": "s1", "description": "wait", "tool": "wait_forever", "args": {}}
        task = asyncio.create_task(
            aeon.arun("wait", tools=[wait_forever], model=planned(step), config=ONE_PASS, log_file=log)
        )
        await started.wait()
        task.cancel()
        return await task

    result = asyncio.run(main())

    assert result.status is aeon.RunStatus.INTERRUPTED
    assert records(log)[-1]["event"] == "run_end" and records(log)[-1]["status"] == "interrupted"


# -- the package ----------------------------------------------------------------------------------------------------


def test_every_public_name_is_exported_documented_and_typed() -> None:
    assert sorted(aeon.__all__) == sorted(aeon._EXPORTS)
    for name in aeon.__all__:
        value = getattr(aeon, name)
        assert value.__doc__, name
        assert name in dir(aeon)
    assert (Path(aeon.__file__).parent / "py.typed").is_file()
    with pytest.raises(AttributeError, match="no attribute 'runn'"):
        aeon.runn  # type: ignore[attr-defined]  # noqa: B018


_IMPORTED = """
import sys
{statement}
heavy = ("dbos", "sqlalchemy", "httpx", "dependency_injector", "typer", "structlog", "tenacity", "rich")
print(sorted({{m.split(".")[0] for m in sys.modules}} & set(heavy)))
print(sorted(m for m in sys.modules if m.startswith("aeon.entrypoints")))
"""


@pytest.mark.parametrize(
    ("statement", "libraries"),
    [
        ("import aeon", []),
        ("import aeon; aeon.tool, aeon.Toolset, aeon.RunResult, aeon.events, aeon.UsageError", []),
    ],
)
def test_importing_aeon_and_its_light_names_loads_no_framework(statement: str, libraries: list[str]) -> None:
    code = _IMPORTED.format(statement=statement)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    heavy, entrypoints = proc.stdout.splitlines()
    assert heavy == str(libraries)
    assert entrypoints == "[]"


def test_aeon_version_loads_no_durable_machinery() -> None:
    code = (
        "import sys\nsys.argv = ['aeon', '--version']\nfrom aeon.entrypoints.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\nprint(sorted({'dbos', 'sqlalchemy'} & set(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert proc.stdout.splitlines() == [proc.stdout.splitlines()[0], "[]"]
    assert proc.stdout.startswith("aeon ")


def test_import_aeon_loads_only_the_package_itself() -> None:
    code = "import sys; before = set(sys.modules); import aeon; print(sorted(set(sys.modules) - before))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert proc.stdout.strip() == "['aeon']"


# -- durable runs ---------------------------------------------------------------------------------------------------

DURABLE_SCRIPT = """
import json
import os
import aeon
import durable_api_tools

result = aeon.run(
    "what is the weather in Paris?",
    tools=[durable_api_tools],
    model="scripted:script.yaml",
    config={"run": {"evaluate": False}},
    log_file="runs.jsonl",
    durable=True,
)
print(json.dumps({"id": result.correlation_id, "status": result.status, "output": result.outputs["s1"].output}))
"""

DURABLE_TOOLS = '''
import aeon


@aeon.tool(idempotent=True)
def weather(city: str) -> str:
    """Today's weather for a city."""
    return f"sunny in {city}"
'''


def test_a_durable_run_is_on_the_record_where_aeon_runs_lists_it(tmp_path: Path) -> None:
    from durable_harness import env, runs

    (tmp_path / "durable_api_tools.py").write_text(DURABLE_TOOLS)
    (tmp_path / "script.yaml").write_text(
        json.dumps({"responses": [json.dumps({"goal": "g", "steps": [WEATHER_STEP]})]})
    )
    (tmp_path / "main.py").write_text(DURABLE_SCRIPT)
    source = Path(aeon.__file__).parents[1]  # this checkout's aeon, also when the tests run without installing it
    environ = {**env(tmp_path), "PYTHONPATH": f"{tmp_path}{os.pathsep}{source}"}
    proc = subprocess.run(
        [sys.executable, "main.py"], cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=120
    )

    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)
    assert (done["status"], done["output"]) == ("completed", "sunny in Paris")
    assert [(r["id"], r["status"]) for r in runs(tmp_path)] == [(done["id"], "completed")]
    assert {r["correlation_id"] for r in records(tmp_path / "runs.jsonl")} == {done["id"]}


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"tools": [weather]}, "give them as modules it can import by name"),
        ({"model": testing.answers()}, "a durable run names its model"),
    ],
)
def test_a_durable_run_takes_only_what_another_process_can_load_again(options: dict[str, Any], says: str) -> None:
    with pytest.raises(aeon.UsageError, match=says):
        aeon.run(REQUEST, durable=True, **options)


def test_a_durable_run_is_not_streamed_yet() -> None:
    async def first() -> object:
        return await anext(aeon.stream(REQUEST, model=f"scripted:{SUM_SCRIPT}", durable=True))

    with pytest.raises(aeon.UsageError, match="does not stream a durable run yet"):
        asyncio.run(first())


# -- human approval from Python ------------------------------------------------------------------------------------
def _approval_plan() -> dict[str, Any]:
    step = {"step_id": "s1", "description": "Send it", "tool": "send_note", "args": {"text": "hi"}}
    return {"goal": "send a note", "steps": [step]}


def _send_note(sent: list[str]) -> Any:
    @aeon.tool(example={"text": "a"}, requires_approval=True)
    def send_note(text: str) -> str:
        """Send a note (a person approves each one)."""
        sent.append(text)
        return f"sent {text}"

    return send_note


def test_an_approve_callback_decides_and_can_edit_the_arguments() -> None:
    sent: list[str] = []
    asked: list[aeon.ApprovalRequest] = []

    def approve(request: aeon.ApprovalRequest) -> aeon.ApprovalDecision:
        asked.append(request)
        return aeon.ApprovalDecision(verdict=aeon.Verdict.APPROVE, by="test", args={"text": "hello"})

    result = aeon.run(
        "send a note",
        tools=[_send_note(sent)],
        plan=_approval_plan(),
        ttl=1,
        model=testing.answers(),
        approve=approve,
        config={"run": {"evaluate": False}},
        log_file=False,
    )
    assert result.status is aeon.RunStatus.COMPLETED
    assert [(r.tool, r.args) for r in asked] == [("send_note", {"text": "hi"})]
    assert sent == ["hello"]


def test_without_a_callback_aeon_run_denies_a_call_that_needs_approval() -> None:
    sent: list[str] = []
    result = aeon.run(
        "send a note",
        tools=[_send_note(sent)],
        plan=_approval_plan(),
        ttl=1,
        model=testing.answers(),
        config={"run": {"evaluate": False}},
        log_file=False,
    )
    assert sent == []
    assert result.plan is not None and result.plan.steps[0].mode is not None
    assert result.plan.steps[0].mode.value == "denied"


def test_a_stream_consumer_answers_the_approval_event() -> None:
    sent: list[str] = []

    async def go() -> list[str]:
        seen = []
        async for event in aeon.stream(
            "send a note",
            tools=[_send_note(sent)],
            plan=_approval_plan(),
            ttl=1,
            model=testing.answers(),
            config={"run": {"evaluate": False}},
            log_file=False,
        ):
            seen.append(type(event).__name__)
            if isinstance(event, aeon.events.ApprovalRequested):
                assert event.request.args == {"text": "hi"}
                aeon.answer(event.request, True)
        return seen

    seen = asyncio.run(go())
    assert sent == ["hi"]
    assert seen.index("ApprovalRequested") < seen.index("ApprovalDecided") < seen.index("RunEnded")
    with pytest.raises(aeon.UsageError, match="not waiting"):
        aeon.answer(
            aeon.ApprovalRequest(run_id="r", key="k", step_id="s", description="d", tool="t", args={}, pass_number=1),
            True,
        )
