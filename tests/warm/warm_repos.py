"""Repo ids the warm-cache tests serve from the loopback hub."""

MODEL = "org/tiny-llama"
DRAFT = "org/tiny-draft"
