"""servekit: exact, checked launch plans for LLM servers from recipe catalogs."""

__version__ = "0.1.0"
