"""Read-side views: typed audit-log records and run histories turned into view models (no I/O)."""
