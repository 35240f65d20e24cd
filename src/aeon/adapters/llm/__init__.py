"""LLM adapters: one module per wire format (OpenAI-compatible, Anthropic), sharing the retrying HTTP layer."""
