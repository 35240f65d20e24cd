"""Tokens per request: the README's requests through Aeon (base and chat profiles), LangGraph's plan-and-execute (the
tutorial's prompts) and a pydantic-ai agent, each against one recording OpenAI-compatible fake server on 127.0.0.1
(bench/helpers/tokens_server.py) that answers every framework correctly: per request, LLM calls, prompt and
completion size.

The prompt is what a provider bills as prompt: every message (its role and text; tool calls and the tool definitions
as JSON) and the response_format schema as JSON; the completion is the answer's text or its tool calls as JSON. Sizes
are Gemma 3's tokens from a llama-server's /tokenize with `--tokenize-url` (start one with
`PYTHON=/path/to/python scripts/serve-local-model.sh --port 8093`), else characters; the first line says which. The
fake answers carry the same plan and the same final answer for every framework, in each one's own format, so the
completion sizes compare formats, not a model's wordiness.

Run: `.venv/bin/python bench/tokens.py [--tokenize-url http://127.0.0.1:8093] [--calls] [--quick]`. `--calls` lists
every call (its kind and sizes); `--quick` runs the simple request only. LangGraph and pydantic-ai come with the
[bench] extra (langgraph, langchain-openai, pydantic-ai-slim[openai]); a peer that is not installed is skipped, and
said so. The chat profile (`llm.profile: chat`) is measured when this Aeon accepts that setting.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from helpers import tokens_peers, tokens_server
from helpers.tokens_server import Exchange, Scenario, Step

MODEL = "gpt-4.1-mini"  # a hosted chat model's name: Aeon picks the openai-chat dialect (strict json_schema)


def _calc(description: str, expression: str, result: str) -> Step:
    return Step(description, result, "calculator", {"expression": expression})


# The README's requests (its demos and the requests of bench/local_model.py, which README "Costs" runs), each with
# the plan a capable model makes and the answer it gives.
SCENARIOS = (
    Scenario("calculate the sum of 5 and 10", (_calc("Add 5 and 10", "5 + 10", "15"),), "The sum of 5 and 10 is 15."),
    Scenario("multiply 6 by 7", (_calc("Multiply 6 by 7", "6 * 7", "42"),), "6 multiplied by 7 is 42."),
    Scenario(
        "add 5 and 10 and explain whether it is odd",
        (_calc("Add 5 and 10", "5 + 10", "15"), Step("Explain whether 15 is odd", "15 is odd: 15 = 2 * 7 + 1.")),
        "5 + 10 = 15, and 15 is odd: 15 = 2 * 7 + 1.",
    ),
    Scenario(
        "add 7 and 8, then explain whether the result is odd",
        (_calc("Add 7 and 8", "7 + 8", "15"), Step("Explain whether 15 is odd", "15 is odd: 15 = 2 * 7 + 1.")),
        "7 + 8 = 15, and 15 is odd: 15 = 2 * 7 + 1.",
    ),
    Scenario(
        "compute (12 * 4) - 7, echo the result, and explain in one sentence how it was obtained",
        (
            _calc("Compute (12 * 4) - 7", "(12 * 4) - 7", "41"),
            Step("Echo the result 41", "41", "echo", {"text": "41"}),
            Step("Explain in one sentence how 41 was obtained", "12 times 4 is 48, and 48 minus 7 is 41."),
        ),
        "41: 12 times 4 is 48, and 48 minus 7 is 41.",
    ),
)
LABELS = {
    "aeon-base": "aeon (base profile)",
    "aeon-chat": "aeon (chat profile)",
    "langgraph": "langgraph plan-and-execute",
    "pydantic-ai": "pydantic-ai agent",
}


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        content = "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    calls = [call.get("function", {}) for call in message.get("tool_calls") or []]
    return str(content) + (json.dumps(calls) if calls else "")


def prompt_text(body: dict[str, Any]) -> str:
    """What a provider bills as the prompt of one request: the messages, the tools, the response_format schema."""
    parts = [f"{m.get('role', '')}: {_text(m)}" for m in body.get("messages") or []]
    for key in ("tools", "response_format"):
        if body.get(key):
            parts.append(json.dumps(body[key]))
    return "\n".join(parts)


def completion_text(reply: dict[str, Any]) -> str:
    return _text(reply)


class Sizer:
    """One unit for all: Gemma 3's tokens (a llama-server's /tokenize) when a URL is given, else characters."""

    def __init__(self, tokenize_url: str | None) -> None:
        self.client = httpx.Client(base_url=tokenize_url, timeout=60, trust_env=False) if tokenize_url else None
        tokenizer = f"tokens (the local model's tokenizer: {tokenize_url}/tokenize)"
        self.unit = tokenizer if tokenize_url else "characters (no --tokenize-url given)"

    def __call__(self, text: str) -> int:
        if self.client is None:
            return len(text)
        reply = self.client.post("/tokenize", json={"content": text})
        reply.raise_for_status()
        return len(reply.json()["tokens"])


@dataclass
class Row:
    framework: str
    request: str
    calls: list[tuple[str, int, int]]  # (kind, prompt, completion) per LLM call
    answer: str

    @property
    def prompt(self) -> int:
        return sum(c[1] for c in self.calls)

    @property
    def completion(self) -> int:
        return sum(c[2] for c in self.calls)


def profile_accepted(value: str) -> bool:
    """Whether this Aeon's settings take `llm.profile: value` (issue 32's model profiles)."""
    from aeon.application.errors import ConfigurationError
    from aeon.entrypoints.config.layers import load_settings

    llm = {"adapter": "openai", "base_url": "http://127.0.0.1:1/v1", "api_key": tokens_peers.API_KEY}
    try:
        load_settings(mapping={"llm": {**llm, "profile": value}})
    except ConfigurationError:
        return False
    return True


def run_aeon(request: str, base_url: str, profile: str | None) -> str:
    """Aeon's answer to `request` over the openai adapter (no log, not durable), with `llm.profile` when given."""
    import aeon

    llm: dict[str, Any] = {"base_url": base_url, "api_key": tokens_peers.API_KEY, "dialect": "openai-chat"}
    if profile is not None:
        llm["profile"] = profile
    result = aeon.run(request, model=f"openai:{MODEL}", config={"llm": llm}, log_file=False, durable=False)
    if result.status != "completed":
        raise RuntimeError(f"aeon run ended {result.status}: {result.error}")
    return str(result.answer)


Runner = Callable[[str, str], str]


def runners(out: Callable[[str], None]) -> dict[str, Runner]:
    """The frameworks this installation can run, each a function (request, base_url) → answer; says what is not."""
    base = "base" if profile_accepted("base") else None  # today's prompts are the base profile's
    found: dict[str, Runner] = {"aeon-base": lambda r, url: run_aeon(r, url, base)}
    if profile_accepted("chat"):
        found["aeon-chat"] = lambda r, url: run_aeon(r, url, "chat")
        out("chat profile: llm.profile: chat")
    else:
        out("chat profile: not available in this build")
    peers = {"langgraph": tokens_peers.run_langgraph, "pydantic-ai": tokens_peers.run_pydantic_ai}
    for name, run in peers.items():
        absent = tokens_peers.missing(name)
        if absent:
            out(f"skipped: {name}, not installed ({', '.join(absent)}): pip install -e '.[bench]'")
        else:
            found[name] = lambda r, url, run=run: run(r, url, MODEL)  # type: ignore[misc]
    return found


def measure(scenarios: tuple[Scenario, ...], run: dict[str, Runner], size: Sizer) -> list[Row]:
    rows = []
    with tokens_server.serving() as server:
        for scenario in scenarios:
            server.scenario = scenario
            for framework, runner in run.items():
                answer = runner(scenario.request, server.url)
                rows.append(_row(framework, scenario, answer, server.take(), size))
    return rows


def _row(framework: str, scenario: Scenario, answer: str, exchanges: list[Exchange], size: Sizer) -> Row:
    sender = framework.split("-")[0] if framework.startswith("aeon") else framework
    strays = [f"{e.framework}/{e.kind}" for e in exchanges if e.framework != sender]
    if strays or not exchanges:
        raise RuntimeError(f"{framework} on {scenario.request!r}: unexpected requests {strays or 'none'}")
    calls = [(e.kind, size(prompt_text(e.body)), size(completion_text(e.reply))) for e in exchanges]
    return Row(framework, scenario.request, calls, answer)


def _line(label: str, calls: int, prompt: int, completion: int) -> str:
    return f"  {label:<42} {calls:>5} {prompt:>9,} {completion:>7,} {prompt // max(calls, 1):>11,}"


def totals(rows: list[Row]) -> dict[str, tuple[int, int, int]]:
    """Per framework: LLM calls, prompt and completion, summed over the requests."""
    summed: dict[str, tuple[int, int, int]] = {}
    for r in rows:
        calls, prompt, completion = summed.get(r.framework, (0, 0, 0))
        summed[r.framework] = (calls + len(r.calls), prompt + r.prompt, completion + r.completion)
    return summed


def ratios(rows: list[Row]) -> dict[str, tuple[float, float]]:
    """Each framework's prompt over pydantic-ai's: on the first (simple) request, and over all requests."""
    summed, first = totals(rows), rows[0].request
    simple = {r.framework: r.prompt for r in rows if r.request == first}
    if "pydantic-ai" not in summed:
        return {}
    return {
        f: (simple[f] / simple["pydantic-ai"], summed[f][1] / summed["pydantic-ai"][1])
        for f in summed
        if f != "pydantic-ai"
    }


def report(rows: list[Row], unit: str, show_calls: bool, out: Callable[[str], None]) -> None:
    out(f"prompt and completion in {unit}, per request")
    out(f"{'request / framework':<44} {'calls':>5} {'prompt':>9} {'compl':>7} {'prompt/call':>11}")
    for request in dict.fromkeys(r.request for r in rows):
        out(request if len(request) <= 60 else request[:57] + "...")
        for r in (r for r in rows if r.request == request):
            out(_line(LABELS[r.framework], len(r.calls), r.prompt, r.completion))
            for kind, prompt, completion in r.calls if show_calls else []:
                out(f"    {kind:<40} {'':>5} {prompt:>9,} {completion:>7,}")
    n = len({r.request for r in rows})
    out(f"totals ({n} request{'s' if n > 1 else ''})")
    for framework, summed in totals(rows).items():
        out(_line(LABELS[framework], *summed))
    first = rows[0].request
    for framework, (simple, overall) in ratios(rows).items():
        out(f"prompt {LABELS[framework]} / pydantic-ai: {simple:.1f}x on {first!r}, {overall:.1f}x in all")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokenize-url", help="a llama-server's URL: count Gemma 3 tokens with its /tokenize")
    ap.add_argument("--calls", action="store_true", help="list every LLM call with its kind and sizes")
    ap.add_argument("--quick", action="store_true", help="the simple request only (CI)")
    args = ap.parse_args()
    size = Sizer(args.tokenize_url)
    run = runners(print)
    rows = measure(SCENARIOS[:1] if args.quick else SCENARIOS, run, size)
    for r in rows:
        print(f"answered: {LABELS[r.framework]} · {r.request!r} → {r.answer[:60]!r}", file=sys.stderr)
    report(rows, size.unit, args.calls, print)


if __name__ == "__main__":
    main()
