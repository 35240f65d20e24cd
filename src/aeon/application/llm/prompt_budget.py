"""The prompt budget: step outputs, handoffs and memory entries go into a call's prompt whole while the model's context
window holds them, and what it cannot hold is clipped fairly, said in the prompt and put on the record.

The budget of a call, in tokens: the context window, less the answer's reserve (llm.max_tokens), less the run's shared
prefix (prompts/layout.py, sent first and never clipped: prompt caching needs it byte-identical on every call) and
the call's own fixed text. What is left is shared by the call's parts (each step output, the incoming handoff, the
final answer), max-min fair: a part smaller than an equal share of what is left goes in whole, and the parts larger
than that split the rest equally; a rounding remainder goes to the most relevant part (callers list parts most
relevant first: the incoming handoff and the final answer, then step outputs newest first). A clipped part keeps its
start and ends with a notice, "[clipped: 12,345 of 40,000 characters shown]"; the call's `prompt_clipped` record
names the call and every part clipped.

No tokenizer is downloaded or run: a token is counted as 3 UTF-8 bytes, an estimate on the high side (English text
and JSON run about 4 characters a token; a CJK character is 3 bytes and about one token), plus a few tokens of framing
per message (domain/ledger.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import msgspec

from aeon.application.llm.calling import ToolTurn
from aeon.domain.ledger import TOKENS_PER_MESSAGE

BYTES_PER_TOKEN = 3
# The window of a model that does not report one (aeon.testing's models, a caller's own LLMPort): the local model's.
DEFAULT_CONTEXT_WINDOW = 8192


class Part(msgspec.Struct, frozen=True):
    """One piece of a prompt the budget may clip: `name` as the record shows it (a step id, "incoming context",
    "final answer")."""

    name: str
    text: str


class Clip(msgspec.Struct, frozen=True):
    """A part the budget clipped: characters shown of the characters it had."""

    name: str
    shown: int
    total: int


def notice(shown: int, total: int) -> str:
    return f" [clipped: {shown:,} of {total:,} characters shown]"


def estimate_tokens(text: str) -> int:
    """The tokens of one message holding `text`, on the high side."""
    return math.ceil(len(text.encode()) / BYTES_PER_TOKEN) + TOKENS_PER_MESSAGE


def context_window(configured: int | None, info: Mapping[str, str]) -> int:
    """The window a run's prompts must fit: llm.context_window when set, else what the model reports
    (`LLMPort.describe()["context_window"]`), else DEFAULT_CONTEXT_WINDOW."""
    if configured is not None:
        return configured
    reported = info.get("context_window", "")
    return int(reported) if reported.isdigit() and int(reported) > 0 else DEFAULT_CONTEXT_WINDOW


def shares(sizes: Sequence[int], room: int) -> list[int]:
    """Max-min fair shares of `room` for parts of `sizes` (most relevant first): smallest first, each part takes all
    it needs while that is within an equal share of what is left; the rest get that share, and what rounding leaves
    goes one unit each to the most relevant of them."""
    out = list(sizes)
    left = max(room, 0)
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    for k, i in enumerate(order):
        level = left // (len(sizes) - k)
        if sizes[i] > level:  # this part and every larger one get the level
            clipped = sorted(order[k:])
            for j in clipped:
                out[j] = level
            for j in clipped[: left - level * len(clipped)]:
                out[j] += 1
            break
        left -= sizes[i]
    return out


def fit(parts: Sequence[Part], room: int) -> tuple[dict[str, str], list[Clip]]:
    """Each part's text as the prompt shows it (whole, or its start and a notice, within its share of `room` bytes),
    and the parts clipped."""
    sizes = [len(p.text.encode()) for p in parts]
    texts: dict[str, str] = {}
    clips: list[Clip] = []
    for part, size, share in zip(parts, sizes, shares(sizes, room), strict=True):
        if share >= size:
            texts[part.name] = part.text
            continue
        total = len(part.text)
        keep = max(share - len(notice(total, total)), 0)
        shown = part.text.encode()[:keep].decode(errors="ignore")  # never half a character
        texts[part.name] = shown + notice(len(shown), total)
        clips.append(Clip(part.name, len(shown), total))
    return texts, clips


class PromptBudget:
    """The prompt budget of one run's calls: the model's window less the answer's reserve and the shared prefix."""

    def __init__(self, run: ToolTurn, *, window: int, reserve: int, prefix: str) -> None:
        self._run = run
        self.window = window
        self._free = window - reserve - (estimate_tokens(prefix) if prefix else 0)

    def room(self, fixed: str) -> int:
        """Bytes a call's parts may take when the rest of its message is `fixed`."""
        return (self._free - estimate_tokens(fixed)) * BYTES_PER_TOKEN

    def fit(self, purpose: str, parts: Sequence[Part], fill: Callable[[Mapping[str, str]], str]) -> dict[str, str]:
        """Each part's text as the call's prompt shows it (whole, or clipped to fit), for the message `fill` builds
        from such texts (putting them in as they are; PromptTemplate.fill, which takes empty slots); a
        `prompt_clipped` record when any part was clipped."""
        room = self.room(fill({p.name: "" for p in parts}))
        texts, clips = fit(parts, room)
        if clips:
            said = ", ".join(f"{c.name} ({c.shown:,} of {c.total:,} characters shown)" for c in clips)
            self._run.record.event(
                "prompt_clipped",
                purpose=purpose,
                step_id=self._run.current_step,
                context_window=self.window,
                room_bytes=max(room, 0),
                clips=[msgspec.to_builtins(c) for c in clips],
                message=f"the prompt for {purpose} clipped {said} to fit the context window of {self.window:,} tokens",
            )
        return texts
