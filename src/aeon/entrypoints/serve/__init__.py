"""aeon serve: the HTTP server, one route group per module."""
