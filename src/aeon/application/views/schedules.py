"""What `aeon schedule list` prints: one line per schedule."""

from __future__ import annotations

from aeon.domain.schedules import Schedule


def schedule_lines(schedules: list[Schedule]) -> list[str]:
    """Name, cron, active or paused, last firing, request; or how to add one."""
    if not schedules:
        return ['no schedules (aeon schedule add "0 7 * * *" "REQUEST" adds one)']
    width = max(len(s.name) for s in schedules)
    cron = max(len(s.cron) for s in schedules)
    lines = []
    for s in schedules:
        fired = f"last fired {s.last_fired[:19].replace('T', ' ')}" if s.last_fired else "not fired yet"
        state = "paused" if s.paused else "active"
        lines.append(f"{s.name:<{width}}  {s.cron:<{cron}}  {state:<6}  {fired}  {s.request!r}")
    return lines
