"""Pure domain: plans, tools, budgets, log records and the error tree. No I/O, clocks or environment."""
