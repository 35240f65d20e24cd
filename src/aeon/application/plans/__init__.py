"""Plans as documents: structural and tool checks, hand-written plan files."""
