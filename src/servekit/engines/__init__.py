"""Engines: pinned local environments, flag catalogs extracted from the real engines, lint,
and one dialect module per engine behind a shared interface (see ``base`` and ``registry``)."""
