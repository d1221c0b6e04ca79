"""Planning reads catalogs without validating them (that is ``servekit catalog validate``'s
slow path). When planning trips over a misshapen document, the validator names the cause; a
:class:`CatalogCauses` validates each catalog layer at most once however often planning trips
(one ``plan --batch`` run), keeping only its errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from servekit.catalog.findings import Finding
    from servekit.errors import CatalogError

SHAPE_ERRORS = (AttributeError, IndexError, KeyError, TypeError, ValueError)
"""What reading a document of the wrong shape raises (a dict lookup on a number, and so on)."""


class CatalogCauses:
    """The errors of each catalog layer, found by validating it the first time planning trips over
    it and kept for every later trip (the errors alone: their number is bounded by the catalog)."""

    def __init__(self) -> None:
        self._errors: dict[Path, list[Finding]] = {}

    def cause(self, root: Path, recipe_file: Path | None) -> CatalogError | None:
        """The catalog's first error that explains a crash planning ``recipe_file``, or None."""
        from servekit.catalog.layers import layer_of
        from servekit.catalog.validate import catalog_cause, catalog_errors

        layer = layer_of(root, recipe_file)
        if layer not in self._errors:
            self._errors[layer] = catalog_errors(layer)
        return catalog_cause(layer, recipe_file, self._errors[layer])


@contextmanager
def catalog_faults(root: Path, recipe_file: Path | None = None, *,
                   errors: tuple[type[BaseException], ...] = SHAPE_ERRORS,
                   causes: CatalogCauses | None = None) -> Iterator[None]:
    """Re-raise a crash inside the block as the catalog's first error (in ``recipe_file`` or a
    shared document; anywhere when ``recipe_file`` is None), when validation finds one. A crash
    the catalog does not explain stays a bug. ``causes``: the validation to reuse (a batch's);
    without it the catalog is validated when the block crashes."""
    try:
        yield
    except errors as exc:
        cause = (causes or CatalogCauses()).cause(root, recipe_file)
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
