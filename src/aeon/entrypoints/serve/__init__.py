"""`aeon serve`: the HTTP door over the run use case (command.py parses, start.py boots, app.py routes)."""
