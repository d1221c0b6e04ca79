"""The registry imports an engine package only when that engine is asked for."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from servekit.engines import registry
from servekit.engines.registry import engine_names, get_engine
from servekit.errors import ServekitError


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_listing_and_the_native_engine_import_no_other_engine_package():
    out = _run("""
        import json, sys
        from servekit.engines.registry import engine_names, native_engine
        loaded = lambda: sorted(m for m in sys.modules if m.startswith("servekit.engines."))
        names = engine_names()
        before = loaded()
        native_engine()
        print(json.dumps([names, before, loaded()]))
    """)
    names, before, after = json.loads(out)
    assert names == [engine_id for engine_id, _ in registry._BUILTIN]
    for engine_id, package in registry._BUILTIN:
        assert package not in before
        assert (package in after) == (engine_id == registry._NATIVE)


def test_every_line_names_a_package_whose_engine_has_that_id():
    for engine_id, _ in registry._BUILTIN:
        assert get_engine(engine_id).id == engine_id


def test_aliases_resolve_lazily_and_unknown_names_list_the_ids():
    for engine_id in engine_names():
        for alias in get_engine(engine_id).aliases:
            assert get_engine(alias).id == engine_id
    with pytest.raises(ServekitError) as caught:
        get_engine("no-such-engine")
    assert all(name in str(caught.value.fix) for name in engine_names())


def test_a_line_whose_package_lacks_the_engine_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(registry._engines, "broken", "servekit.engines.common")
    with pytest.raises(ServekitError, match="servekit.engines.common.ENGINE is not the engine 'broken'"):
        get_engine("broken")
