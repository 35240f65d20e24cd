"""The LLM-facing services: the gateway, the supervisor that repairs output, prompts, JSON repair, planner, profiler."""
