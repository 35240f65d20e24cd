"""Durable runs on DBOS: the workflow runner, its operations (resume, replay, runs), batches and their CLI."""
