"""What of a long tool output reaches the later prompts: a run whose tool returns a text of N characters, then a
reasoning step that summarises it, the evaluation, a refinement and a second pass (a scripted model, no network).

For each prompt that should carry the output (the summarising step, the evaluation, the refinement) it prints how
many of the output's characters reach it (the longest start of the text found in the prompt) and the prompt's size,
then the `prompt_clipped` records of the run (what the prompt budget clipped, for which call).
Run: `.venv/bin/python bench/prompt_budget.py [--size N ...] [--window TOKENS]`; `--quick` runs 5,000 and 1,000,000.
`--tokens` (needs the [local] extra) also counts each prompt's tokens with Gemma's own tokenizer (the local
llama-server's /tokenize, its chat template applied) beside the budget's estimate.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from aeon import testing
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.decorator import tool
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.kernel.run import RunSettings
from aeon.application.llm.prompt_budget import estimate_tokens

_PROFILE = {
    "reasoning_depth": 2,
    "information_sufficiency": 1.0,
    "expected_tool_usage": "minimal",
    "output_breadth": "narrow",
    "confidence_requirement": "medium",
    "raw_inference": "read, then summarise",
}
_PLAN = {
    "goal": "summarise the report",
    "steps": [
        {"step_id": "s1", "description": "Read the report", "tool": "read_report", "args": {"name": "q3"}},
        {"step_id": "s2", "description": "Summarise the report from s1", "agent": "llm"},
    ],
}
_ADD = {
    "actions": [
        {
            "action_type": "ADD",
            "target_step_id": "",
            "new_step": {"step_id": "s3", "description": "List the report's figures from s1", "agent": "llm"},
            "substeps": [],
            "justification": "the figures are asked for",
        }
    ]
}


def _judged(done: bool) -> str:
    score = 1.0 if done else 0.4
    verdict = {"completeness_score": score, "coherence_score": 1.0, "consistent": True, "explanation": "x"}
    return json.dumps({**verdict, "issues": []})


def report_text(size: int) -> str:
    """`size` characters of numbered sentences (no character that JSON escapes, single spaces), so that any start of
    it is found verbatim in a prompt however the prompt quotes it."""
    parts, n, total = [], 0, 0
    while total < size:
        n += 1
        part = f"Sentence {n:07d} of the quarterly report says revenue grew. "
        parts.append(part)
        total += len(part)
    return "".join(parts)[: size - 1].rstrip().ljust(size - 1, "-") + "."  # no trailing space to collapse


def reached(text: str, prompt: str) -> int:
    """The length of the longest start of `text` found in `prompt`."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if text[:mid] in prompt:
            lo = mid
        else:
            hi = mid - 1
    return lo


def measure(size: int, window: int | None) -> dict[str, Any]:
    text = report_text(size)

    @tool
    def read_report(name: str) -> str:
        """The text of a named report."""
        return text

    registry = ToolRegistry()
    register_builtins(registry)
    registry.register_function(read_report)
    prompts: dict[str, str] = {}
    requests: dict[str, list[dict[str, str]]] = {}
    answers = iter(
        [
            json.dumps({"profile": _PROFILE, "plan": _PLAN}),
            json.dumps({"answer": "Revenue grew.", "clarity_state": "CLEAR", "handoff_to_next": "revenue grew"}),
            _judged(False),
            json.dumps(_ADD),
            json.dumps({"answer": "No figures.", "clarity_state": "CLEAR", "handoff_to_next": ""}),
            _judged(True),
        ]
    )

    def answer(call: testing.LLMCall) -> str:
        kind = {"step_result": "reason", "evaluation": "evaluate", "refinement": "refine"}.get(call.schema_name)
        if kind is not None and kind not in prompts:  # the first of each kind: pass 1's
            prompts[kind] = "\n".join(m.content for m in call.messages)
            requests[kind] = [{"role": m.role, "content": m.content} for m in call.messages]
        return next(answers)

    log = testing.ListLog()
    extra = {"context_window": window} if window is not None else {}
    settings = RunSettings(ttl=2, evaluate=True, ttl_given=True, **extra)  # type: ignore[arg-type]
    orch = testing.orchestrator(testing.FunctionLLM(answer), run=settings, tools=registry, log=log)
    result = asyncio.run(orch.run("summarise the q3 report"))
    clipped = log.of("prompt_clipped")
    return {
        "size": size,
        "status": result.status.value,
        "reached": {kind: (reached(text, p), len(p)) for kind, p in prompts.items()},
        "clipped": clipped,
        "requests": requests,
    }


async def gemma_tokens(requests: dict[str, list[dict[str, str]]]) -> dict[str, int]:
    """Each request's prompt tokens as the local model counts them (a llama-server started for it, then stopped)."""
    import httpx

    from aeon.adapters.llm._llama_server import LlamaServer, resolve_binary, resolve_model

    server = LlamaServer(resolve_binary(None), resolve_model(None, None), ctx_size=8192, threads=2, alias="gemma")
    server.start()
    try:
        await server.wait_ready(180)
        async with httpx.AsyncClient(base_url=server.base_url, timeout=120, trust_env=False) as client:
            out = {}
            for kind, messages in requests.items():
                prompt = (await client.post("/apply-template", json={"messages": messages})).json()["prompt"]
                out[kind] = len((await client.post("/tokenize", json={"content": prompt})).json()["tokens"])
            return out
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, action="append", help="characters the tool returns (repeatable)")
    parser.add_argument("--window", type=int, help="the model's context window in tokens (default: the adapter's)")
    parser.add_argument("--quick", action="store_true", help="5,000 and 1,000,000 characters")
    parser.add_argument("--tokens", action="store_true", help="count tokens with Gemma's tokenizer ([local] extra)")
    args = parser.parse_args()
    sizes = args.size or ([5_000, 1_000_000] if args.quick else [5_000, 50_000, 1_000_000])
    for size in sizes:
        out = measure(size, args.window)
        print(f"tool output {size:,} characters · run {out['status']}")
        for kind, (n, total) in out["reached"].items():
            print(f"  {kind:9s} prompt: {n:>9,} of {size:,} characters of the output ({total:,} characters in all)")
        if args.tokens:
            counted = asyncio.run(gemma_tokens(out["requests"]))
            for kind, messages in out["requests"].items():
                estimate = sum(estimate_tokens(m["content"]) for m in messages)
                chars = sum(len(m["content"]) for m in messages)
                rate = chars / counted[kind]
                print(f"  {kind:9s} tokens: estimated {estimate:,}, Gemma {counted[kind]:,} ({rate:.2f} chars a token)")
        for record in out["clipped"]:
            shown = ", ".join(f"{c['name']} {c['shown']:,}/{c['total']:,}" for c in record.get("clips", []))
            print(f"  prompt_clipped {record.get('purpose')}: {shown}")


if __name__ == "__main__":
    main()
