"""The catalogs the Kubernetes tests render: the bundled one, and the reference one when present."""

from __future__ import annotations

import pytest

import servekit


@pytest.fixture(scope="module")
def bundled():
    return servekit.Catalog.load()


@pytest.fixture(scope="module")
def reference(reference_catalog):
    return servekit.Catalog.load(reference_catalog)
