"""HTTP client overhead: one successful post_json through httpx.MockTransport, and the retry policy's share of it.

Prints the median microseconds per post and per retry-wrapped no-op (the tenacity success path alone).
Run: `.venv/bin/python bench/http_post.py [--posts N] [--runs N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import httpx

from aeon.adapters.llm._http import JsonPoster
from aeon.adapters.llm._retry import RetryPolicy

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
ANSWER = {"id": "r1", "choices": [{"message": {"content": "fine"}, "finish_reason": "stop"}]}


def _answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json=ANSWER)


async def _posts(n: int) -> float:
    poster = JsonPoster("http://llm.test/v1", transport=httpx.MockTransport(_answer))
    try:
        for _ in range(50):  # warm the client and the code paths
            await poster.post_json("/chat/completions", BODY)
        began = time.perf_counter()
        for _ in range(n):
            await poster.post_json("/chat/completions", BODY)
        return (time.perf_counter() - began) / n * 1e6
    finally:
        await poster.aclose()


async def _noop() -> None:
    return None


async def _policy(n: int) -> float:
    policy = RetryPolicy(max_attempts=3, sleep=asyncio.sleep, random=lambda: 0.0)
    began = time.perf_counter()
    for _ in range(n):
        await policy.run(_noop)
    return (time.perf_counter() - began) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--posts", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="a few seconds: checks the bench still runs (CI)")
    args = parser.parse_args()
    if args.quick:
        args.posts, args.runs = 100, 1
    posts = [asyncio.run(_posts(args.posts)) for _ in range(args.runs)]
    policy = [asyncio.run(_policy(args.posts)) for _ in range(args.runs)]
    print(f"post_json via MockTransport: {statistics.median(posts):.1f} µs per post (median of {args.runs} runs)")
    print(f"retry policy alone:          {statistics.median(policy):.1f} µs per call")


if __name__ == "__main__":
    main()
