"""Modules the bench scripts in bench/ import: fake servers, peers, followers and record checks, none a bench itself."""
