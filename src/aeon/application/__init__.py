"""Use cases (planner, validator, supervisor, executor, orchestrator) written against ports."""
