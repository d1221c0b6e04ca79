"""Every stored vLLM ``serve`` catalog (0.32/0.33 from scripts/extract_vllm_flags.py, past releases
from scripts/extract_vllm_releases.py): each loads, is well formed, and the public history of a few
options holds in the stored data, and ``servekit engine diff`` / ``engine list`` cover them all."""

from __future__ import annotations

import json

import pytest
from packaging.version import Version

from servekit.cli.app import main
from servekit.engines.common.flags import read_stored_json
from servekit.engines.vllm.catalog import CATALOGS
from servekit.engines.vllm.config_fields import config_fields_path, load_config_fields
from servekit.engines.vllm.versions import stored_versions

METHODS = {"parser", "read from source"}


def _has(version: str, option: str) -> bool:
    return CATALOGS.load(version).get(option) is not None


@pytest.mark.parametrize("version", stored_versions())
def test_each_catalog_loads_and_is_well_formed(version):
    catalog = CATALOGS.load(version)
    assert (catalog.engine, catalog.version, catalog.command) == ("vllm", version, "serve")
    assert catalog.source["method"] in METHODS
    assert catalog.source["distribution_version"] == version
    names = [spec.name for spec in catalog.flags]
    assert len(names) > 50 and len(set(names)) == len(names)
    options = [opt for spec in catalog.flags for opt in spec.option_strings()]
    assert len(options) == len(set(options)), "an option string names two flags"
    assert all(opt.startswith("-") for opt in options)
    assert all(spec.dest for spec in catalog.flags)
    assert {"--model", "--port", "--tensor-parallel-size"} & set(options)
    for check in catalog.registry_checks:
        assert check.flag in options and catalog.registries.get(check.registry), check
    for old, new in catalog.renamed.items():
        assert old not in options and catalog.get(new.split(".")[0]) is not None, (old, new)


@pytest.mark.parametrize("version", stored_versions())
def test_each_config_field_tree_names_the_catalogs_json_options(version):
    path = config_fields_path(version)
    if path is None:  # 0.7's config classes are not dataclasses yet: nothing to extract
        pytest.skip(f"vLLM {version}: no config-class fields stored")
    tree = load_config_fields(version)
    assert read_stored_json(path)["version"] == version
    catalog = CATALOGS.load(version)
    for option, entry in tree.flags.items():
        assert catalog.get(option) is not None and entry["class"] in tree.classes, option
    for name, cls in tree.classes.items():
        assert isinstance(cls["fields"], dict) and set(cls["required"]) <= set(cls["fields"]), name


def test_past_releases_are_stored_compressed_and_span_the_releases_people_run():
    versions = stored_versions()
    assert len(versions) >= 10
    assert Version(versions[0]) < Version("0.7") and versions[-1] == "0.33.0"
    assert versions == sorted(versions, key=Version) and len(versions) == len(set(versions))
    past = [v for v in versions if v not in ("0.32.0", "0.33.0")]
    assert all(CATALOGS.path(v).name.endswith(".json.gz") for v in past)


def test_enable_reasoning_present_until_its_removal_in_0_10():
    """--enable-reasoning was deprecated in 0.9.0 (vllm-project/vllm#17452, #18404) and refused from
    0.10.0 on (vllm-project/vllm#18538); --reasoning-parser took its place."""
    for version in stored_versions():
        if Version(version) >= Version("0.10.0"):
            assert not _has(version, "--enable-reasoning"), version
            assert _has(version, "--reasoning-parser"), version
        elif Version(version) >= Version("0.9.0"):
            assert _has(version, "--enable-reasoning"), version


def test_task_gives_way_to_runner():
    """``--runner``/``--convert`` replaced ``--task`` (vllm-project/vllm#21470, July 2025, after 0.9.2):
    no release has neither; once ``--task`` is gone it stays gone and the catalog's renamed map
    points at ``--runner``."""
    versions = stored_versions()
    gone = False
    for version in versions:
        task, runner = _has(version, "--task"), _has(version, "--runner")
        assert task or runner, version
        if Version(version) <= Version("0.9.2"):
            assert task and not runner, version
        if gone:
            assert not task, f"--task back in {version}"
        if not task:
            gone = True
            assert CATALOGS.load(version).renamed.get("--task") == "--runner", version
    assert gone


def _minor(version: str) -> tuple[int, ...]:
    return Version(version).release[:2]


def test_engine_diff_works_for_any_pair(capsys):
    """Each stored release differs from the one stored before it, except a minor's last patch,
    which is stored even when its flags are its minor's first release's (a release between them
    then finds its minor's catalog)."""
    versions = stored_versions()
    pairs = [(versions[0], versions[-1]), (versions[-1], versions[0])]
    pairs += list(zip(versions, versions[1:], strict=False))
    for old, new in pairs:
        assert main(["engine", "diff", "vllm", old, new, "--format", "json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert (doc["from"], doc["to"]) == (old, new)
        later = [v for v in versions if Version(v) > Version(new)]
        last_of_minor = not later or _minor(later[0]) != _minor(new)
        if old != new and not (last_of_minor and _minor(old) == _minor(new)):
            assert doc["added"] or doc["removed"] or doc["renamed"] or doc["choices"] or doc["defaults"], (old, new)


def test_engine_list_shows_every_stored_catalog(capsys):
    assert main(["engine", "list", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["catalogs"]
    vllm = {row["version"]: row for row in rows if row["engine"] == "vllm"}
    assert list(vllm) == stored_versions()
    assert all(row["method"] in METHODS and row["command"] == "serve" for row in vllm.values())
    assert main(["engine", "list"]) == 0
    text = capsys.readouterr().out
    assert f"stored flag catalogs ({len(rows)}):" in text
    assert all(any(line.split()[:2] == ["vllm", v] for line in text.splitlines()) for v in vllm)
