"""The stored SGLang and MAX flag catalogs of past releases (scripts/extract_sglang_history.sh,
scripts/extract_max_history.sh): each loads and is well formed, known history holds in the data,
and ``servekit engine diff`` answers for every stored pair."""

from __future__ import annotations

import itertools
import json

import pytest
from packaging.version import Version

from servekit.cli.app import main
from servekit.engines.common.catalog_diff import diff_catalogs
from servekit.engines.common.flags import CatalogStore
from servekit.engines.max.specs import CATALOGS as MAX_CATALOGS
from servekit.engines.registry import get_engine
from servekit.engines.sglang.specs import CATALOGS as SGLANG_CATALOGS

STORES: dict[str, CatalogStore] = {"sglang": SGLANG_CATALOGS, "max": MAX_CATALOGS}
METHODS = ("parser", "read from source")


def _stored() -> list[tuple[str, str, str]]:
    return [(engine, command, version) for engine, store in STORES.items()
            for command in get_engine(engine).commands for version in store.versions(command)]


def test_the_history_is_stored() -> None:
    versions = SGLANG_CATALOGS.versions()
    assert versions[0] == "0.4.0" and versions[-1] == "0.5.23" and len(versions) >= 35
    assert {v.rsplit(".post", 1)[0].rsplit(".", 1)[0] for v in versions} == {"0.4", "0.5"}
    assert MAX_CATALOGS.versions()[-1] == "26.7.0"
    assert get_engine("sglang").default_version == "0.5.23"


@pytest.mark.parametrize(("engine", "command", "version"), _stored())
def test_each_stored_catalog_is_well_formed(engine: str, command: str, version: str) -> None:
    catalog = STORES[engine].load(version, command)
    assert (catalog.engine, catalog.command, catalog.version) == (engine, command, version)
    options = [option for spec in catalog.flags for option in spec.option_strings()]
    assert catalog.flags or catalog.source.get("ignore_unknown_options"), "no options, and none passed on"
    assert all(option.startswith("-") for option in options)
    assert all(catalog.get(spec.name) is not None for spec in catalog.flags)
    assert all(spec.dest for spec in catalog.flags)
    assert all(spec.takes_value or spec.choices is None for spec in catalog.flags)
    source = catalog.source
    assert source.get("method", "parser") in METHODS
    assert source["distribution_version"] == version
    assert all("==" in stub for stub in source.get("stubbed_modules", ()))
    for check in catalog.registry_checks:
        assert check.registry in catalog.registries and catalog.get(check.flag) is not None


def _sglang(version: str):
    return SGLANG_CATALOGS.load(version)


def test_sglang_moe_parallelism_flags_moved_to_moe_a2a_backend() -> None:
    """sgl-project/sglang PR #8658 ("[5/N] MoE Refactor: Update MoE parallelism arguments", merged
    2025-08-01) added ``--moe-a2a-backend`` and deprecated ``--enable-ep-moe`` and
    ``--enable-deepep-moe``; the stored catalogs show it in 0.4.10 and their removal in 0.5.4."""
    before = diff_catalogs(_sglang("0.4.9.post6"), _sglang("0.4.10.post2"))
    assert "--moe-a2a-backend" in before.added
    for old in ("--enable-ep-moe", "--enable-deepep-moe"):
        assert not _sglang("0.4.9.post6").get(old).help.startswith("(Deprecated)")
        assert _sglang("0.4.10.post2").get(old).help.startswith("(Deprecated)")
    removal = diff_catalogs(_sglang("0.5.3.post3"), _sglang("0.5.4.post3"))
    assert {"--enable-ep-moe", "--enable-deepep-moe"} <= set(removal.removed)
    assert "deepep" in (_sglang("0.5.4.post3").get("--moe-a2a-backend").choices or ())
    later = [v for v in SGLANG_CATALOGS.versions() if Version(v) >= Version("0.5.4")]
    assert later and all(_sglang(v).get("--enable-deepep-moe") is None for v in later)


def test_every_stored_pair_diffs() -> None:
    for engine, store in STORES.items():
        for command in get_engine(engine).commands:
            versions = store.versions(command)
            for old, new in itertools.combinations(versions, 2):
                diff = diff_catalogs(store.load(old, command), store.load(new, command))
                assert (diff.old_version, diff.new_version) == (old, new)
                assert all(any(s.name == name for s in store.load(new, command).flags) for name in diff.added)
                assert all(any(s.name == name for s in store.load(old, command).flags) for name in diff.removed)


@pytest.mark.parametrize("engine", sorted(STORES))
def test_engine_diff_cli_for_consecutive_releases(engine: str, capsys) -> None:
    versions = STORES[engine].versions()
    for old, new in itertools.pairwise(versions):
        assert main(["engine", "diff", engine, old, new, "--format", "json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert (doc["engine"], doc["from"], doc["to"]) == (engine, old, new)
    assert main(["engine", "diff", engine, versions[0], versions[-1]]) == 0
    assert capsys.readouterr().out.startswith(f"{engine} serve: {versions[0]} -> {versions[-1]}")


def test_engine_list_shows_every_stored_catalog(capsys) -> None:
    assert main(["engine", "list", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["catalogs"]
    for engine, store in STORES.items():
        for command in get_engine(engine).commands:
            listed = [r["version"] for r in rows if r["engine"] == engine and r["command"] == command]
            assert listed == store.versions(command)
    assert all(r["method"] in METHODS for r in rows if r["engine"] in STORES)


def test_sglang_0514_names_parallel_sizes_by_their_short_form() -> None:
    """SGLang 0.5.14 builds its parser from dataclasses (``add_cli_args_from_dataclass`` in
    python/sglang/srt/server_args.py): ``--tp-size`` became the name and ``--tensor-parallel-size``
    its alias, with a new destination. The diff pairs them by the option both accept, as renames
    whose old spelling still parses, not as one flag removed and another added."""
    diff = diff_catalogs(_sglang("0.5.13.post1"), _sglang("0.5.14"))
    renames = {r.old: r for r in diff.renamed}
    for old, new in (("--tensor-parallel-size", "--tp-size"), ("--data-parallel-size", "--dp-size")):
        assert renames[old].new == new and renames[old].still_parses
        assert old not in diff.removed and new not in diff.added
    assert _sglang("0.5.23").get("--tensor-parallel-size").name == "--tp-size"


def test_max_dropped_max_num_steps_in_26_5() -> None:
    """servekit.engines.max.renames lists ``--max-num-steps`` as removed "before 26.7"; the stored
    catalogs of MAX's own click commands place it: 26.4.0 has it, 26.5.0 does not."""
    old, new = MAX_CATALOGS.load("26.4.0"), MAX_CATALOGS.load("26.5.0")
    assert old.get("--max-num-steps") is not None and new.get("--max-num-steps") is None
    assert "--max-num-steps" in diff_catalogs(old, new).removed
    assert old.source["parser"].startswith("max.entrypoints.") and new.source["parser"].startswith("max._entrypoints.")
