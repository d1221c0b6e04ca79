"""Planning reads catalogs without validating them (that is ``servekit catalog validate``'s
slow path). When a plan trips over a misshapen document, the validator names the cause."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

_SHAPE_ERRORS = (AttributeError, IndexError, KeyError, TypeError, ValueError)


@contextmanager
def catalog_faults(docs, recipe_id: str | None) -> Iterator[None]:
    """Re-raise a crash inside the block as the catalog's first error in that recipe's file or a
    shared document, when validation finds one; a crash the catalog does not explain stays a bug."""
    try:
        yield
    except _SHAPE_ERRORS as exc:
        from servekit.catalog.validate import catalog_cause

        cause = catalog_cause(docs.root, docs.sources.get(f"models/{recipe_id}"))
        if cause is None:
            raise
        raise cause from exc
