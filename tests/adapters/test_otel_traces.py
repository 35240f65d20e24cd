"""OpenTelemetry traces following the GenAI semantic conventions, and tracing off by default at no cost.

The tests that need the SDK skip when the [otel] extra is not installed (CI installs only [dev]); the ones that prove
the no-OpenTelemetry path run everywhere.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aeon import testing
from aeon.application.kernel.run import RunSettings
from aeon.domain.llm import Completion, Usage

from cli_harness import REQUEST, SUM_STEP, assert_exit, invoke, plan_json, scripted_config
from multipass import first, profile

PROFILE = profile(1, sufficiency=1.0, breadth="narrow", confidence="low")
EVALUATION = {"issues": [], "completeness_score": 1.0, "coherence_score": 1.0, "consistent": True, "explanation": "ok"}
ANSWERS = [first(PROFILE, plan_json(SUM_STEP)), json.dumps(EVALUATION)]


def metered() -> testing.FunctionLLM:
    queue = list(ANSWERS)

    def answer(call: testing.LLMCall) -> Completion:
        usage = Usage(prompt_tokens=300, completion_tokens=40, cached_tokens=100)
        return Completion(text=queue.pop(0), usage=usage, finish_reason="stop", model="m-1", request_id="r")

    return testing.FunctionLLM(answer, name="m-1")


def traced_run(*, capture_content: bool = False) -> tuple[Any, list[Any], Any]:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from aeon.adapters.telemetry.otel import OtelTracer

    spans, metrics = InMemorySpanExporter(), InMemoryMetricReader()
    tracer = OtelTracer(
        span_processor=SimpleSpanProcessor(spans), metric_reader=metrics, capture_content=capture_content
    )
    orch = testing.orchestrator(metered(), run=RunSettings(), tracer=tracer)
    result = asyncio.run(orch.run(REQUEST))
    data = metrics.get_metrics_data()
    tracer.shutdown()
    return result, list(spans.get_finished_spans()), data


def test_a_run_is_one_invoke_agent_span_holding_its_phases_calls_and_tool_calls() -> None:
    result, spans, _ = traced_run()
    assert result.status == "completed"
    by_name: dict[str, list[Any]] = {}
    for s in spans:
        by_name.setdefault(s.name, []).append(s)
    [root] = by_name["invoke_agent aeon"]
    assert root.parent is None
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.agent.name"] == "aeon"
    assert root.attributes["gen_ai.conversation.id"] == result.correlation_id
    assert (root.attributes["gen_ai.usage.input_tokens"], root.attributes["gen_ai.usage.output_tokens"]) == (600, 80)
    phases = {s.name: s for s in spans if s.name.startswith("phase ")}
    assert set(phases) == {"phase A", "phase B", "phase C", "phase D"}
    assert all(s.parent.span_id == root.context.span_id for s in phases.values())

    chats = by_name["chat m-1"]
    assert len(chats) == 2 == result.budget.llm_calls  # profile and plan, evaluation
    for chat in chats:
        a = chat.attributes
        assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.provider.name"] == "test"
        assert a["gen_ai.request.model"] == "m-1" and a["gen_ai.response.finish_reasons"] == ("stop",)
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (300, 40)
        assert "gen_ai.input.messages" not in a and "gen_ai.output.messages" not in a  # no text unless opted in
    assert [phase_of(c, phases) for c in chats] == ["phase A", "phase C"]

    [tool] = by_name["execute_tool calculator"]
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "calculator" and tool.attributes["gen_ai.tool.call.id"] == "s1"
    assert phase_of(tool, phases) == "phase C" and "gen_ai.tool.call.arguments" not in tool.attributes


def phase_of(span: Any, phases: dict[str, Any]) -> str:
    return next(name for name, p in phases.items() if p.context.span_id == span.parent.span_id)


def test_token_usage_is_recorded_in_the_gen_ai_client_token_usage_histogram() -> None:
    _, _, data = traced_run()
    [metric] = [m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics]
    assert (metric.name, metric.unit) == ("gen_ai.client.token.usage", "{token}")
    points = {p.attributes["gen_ai.token.type"]: p for p in metric.data.data_points}
    assert (points["input"].count, points["input"].sum) == (2, 600)
    assert (points["output"].count, points["output"].sum) == (2, 80)
    assert points["input"].attributes["gen_ai.request.model"] == "m-1"
    assert points["input"].attributes["gen_ai.operation.name"] == "chat"


def test_prompt_and_answer_text_go_on_spans_only_when_the_user_opts_in() -> None:
    _, spans, _ = traced_run(capture_content=True)
    chat = next(s for s in spans if s.name == "chat m-1")
    sent = json.loads(chat.attributes["gen_ai.input.messages"])
    assert sent[-1]["role"] == "user" and REQUEST in sent[-1]["content"]
    assert json.loads(chat.attributes["gen_ai.output.messages"]) == [{"role": "assistant", "content": ANSWERS[0]}]
    tool = next(s for s in spans if s.name == "execute_tool calculator")
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == SUM_STEP["args"]


def console_spans(text: str) -> list[dict[str, Any]]:
    """The JSON documents the console exporters wrote, one after the other."""
    decoder, docs, i = json.JSONDecoder(), [], 0
    while (start := text.find("{", i)) != -1:
        doc, i = decoder.raw_decode(text, start)
        docs.append(doc)
    return docs


def test_the_console_exporter_writes_the_spans_to_stderr_and_leaves_json_stdout_alone(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk")
    config = scripted_config(tmp_path, ANSWERS, run={"evaluate": True}, otel={"enabled": True, "exporter": "console"})
    out = invoke("run", REQUEST, "--config", config, "--json", "-q")
    assert_exit(out, 0)
    assert json.loads(out.stdout)["status"] == "completed"  # stdout is still exactly one JSON document
    docs = console_spans(out.stderr)
    spans = [d for d in docs if "name" in d and "context" in d]
    names = [s["name"] for s in spans]
    assert names.count("chat scripted") == 2 and names.count("invoke_agent aeon") == 1
    assert "execute_tool calculator" in names and {"phase A", "phase B", "phase C", "phase D"} <= set(names)
    chat = next(s for s in spans if s["name"] == "chat scripted")
    a = chat["attributes"]
    assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.provider.name"] == "scripted"
    assert a["gen_ai.request.model"] == "scripted" and a["gen_ai.response.finish_reasons"] == ["stop"]
    assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
    assert chat["kind"] == "SpanKind.CLIENT"
    metrics = [d for d in docs if "resource_metrics" in d]
    assert "gen_ai.client.token.usage" in json.dumps(metrics)


# -- tracing off: the default, with or without the extra ----------------------------------------------------------
def test_with_tracing_off_a_run_never_imports_opentelemetry(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, ANSWERS, run={"evaluate": True})
    code = (
        "import sys; from aeon.entrypoints.cli import main; sys.argv = ['aeon', 'run', sys.argv[1], '--config', "
        "sys.argv[2], '--json', '-q']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')], 'opentelemetry was imported'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, REQUEST, str(config)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "completed"


def test_tracing_switched_on_without_the_extra_is_a_config_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m.startswith(("opentelemetry", "aeon.adapters.telemetry.otel"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # as if the [otel] extra were not installed
    config = scripted_config(tmp_path, ANSWERS, otel={"enabled": True})
    out = invoke("run", REQUEST, "--config", config, "--json", "-q")
    assert_exit(out, 2)
    error = json.loads(out.stdout)["error"]
    assert error["code"] == "AEON.CONFIG" and 'pip install -e ".[otel]"' in error["message"]
