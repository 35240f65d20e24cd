"""What `aeon threads` and `aeon threads show` print: a thread list and one thread's turns and memory, as text."""

from __future__ import annotations

from aeon.domain.text import cut
from aeon.domain.threads import Thread, ThreadSummary, as_json

SHOWN = 240  # characters of a request, answer or memory value `aeon threads show` prints on its line


def thread_lines(threads: list[ThreadSummary]) -> list[str]:
    """One line per thread, the latest updated first: name, turns, last update."""
    if not threads:
        return ['no threads yet (aeon run --thread NAME "..." starts one)']
    width = max(len(t.name) for t in threads)
    return [f"{t.name:<{width}}  {t.turns:>4} turn(s)  updated {t.updated_at[:19].replace('T', ' ')}" for t in threads]


def thread_text(thread: Thread) -> str:
    """A thread's turns, oldest first (request, answer, status, run id; where an untrusted answer came from), then
    its memory."""
    lines = [f"thread {thread.name}: {len(thread.turns)} turn(s), created {thread.created_at[:19].replace('T', ' ')}"]
    for turn in thread.turns:
        lines.append(f"t{turn.number}  {turn.status}  run {turn.run_id}  {turn.at[:19].replace('T', ' ')}")
        lines.append(f"    request: {cut(turn.request, SHOWN)}")
        answer = cut(turn.answer, SHOWN) if turn.answer is not None else "(none)"
        lines.append(f"    answer:  {answer}" + ("" if turn.label.trusted else f"  [{turn.label.shown()}]"))
    if thread.memory:
        lines.append("memory:")
        for entry in thread.memory:
            mark = "" if entry.label.trusted else f"  [{entry.label.shown()}]"
            lines.append(f"    {entry.key} = {cut(as_json(entry.value), SHOWN)}{mark}")
    return "\n".join(lines) + "\n"
