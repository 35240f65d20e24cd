"""The stages of one cycle, each a function from the run and its services to a typed result."""
