"""What the web doors (`aeon ui`, `aeon serve`) share: the guard in front, server-sent events, uvicorn on a socket."""
