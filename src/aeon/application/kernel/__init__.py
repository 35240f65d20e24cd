"""The loop: the orchestrator, the stages it runs in order, the executor, the run and its record."""
