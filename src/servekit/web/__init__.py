"""The web surface: the command builder and catalog pages and the live JSON API (``servekit web``)."""
