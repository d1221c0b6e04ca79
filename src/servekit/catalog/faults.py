"""Planning reads catalogs without validating them (that is ``servekit catalog validate``'s
slow path). When planning trips over a misshapen document, the validator names the cause."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

SHAPE_ERRORS = (AttributeError, IndexError, KeyError, TypeError, ValueError)
"""What reading a document of the wrong shape raises (a dict lookup on a number, and so on)."""


@contextmanager
def catalog_faults(root: Path, recipe_file: Path | None = None, *,
                   errors: tuple[type[BaseException], ...] = SHAPE_ERRORS) -> Iterator[None]:
    """Re-raise a crash inside the block as the catalog's first error (in ``recipe_file`` or a
    shared document; anywhere when ``recipe_file`` is None), when validation finds one. A crash
    the catalog does not explain stays a bug."""
    try:
        yield
    except errors as exc:
        from servekit.catalog.layers import layer_of
        from servekit.catalog.validate import catalog_cause

        cause = catalog_cause(layer_of(root, recipe_file), recipe_file)
        if cause is None:
            raise
        raise cause from exc


def recipe_faults(catalog: str | None, recipe_id: str) -> AbstractContextManager[None]:
    """``catalog_faults`` for one recipe of the catalog ``--catalog`` names; a no-op when
    ``recipe_id`` is not a recipe there (a checkpoint id or a local directory, say)."""
    from servekit.catalog.documents import recipe_paths, resolve_catalog_dir

    root = resolve_catalog_dir(catalog)
    path = recipe_paths(root).get(recipe_id)
    return nullcontext() if path is None else catalog_faults(root, path)
