"""Several vLLM versions: the stored catalogs, ``servekit engine diff``, lint at a chosen version
and the finding for a spelling a newer release renamed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from servekit.cli.app import main
from servekit.engines.common.catalog_diff import diff_catalogs
from servekit.engines.lint import lint_argv
from servekit.engines.registry import get_engine
from servekit.engines.vllm.versions import _respelled, catalog_version, newer_versions, stored_versions
from servekit.errors import ServekitError


def _diff():
    vllm = get_engine("vllm")
    return diff_catalogs(vllm.flag_catalog("0.32.0"), vllm.flag_catalog("0.33.0"))


def test_both_versions_are_stored_and_the_default_is_pinned():
    assert stored_versions()[-2:] == ["0.32.0", "0.33.0"]
    assert get_engine("vllm").default_version == "0.32.0" and catalog_version(None) == "0.32.0"
    assert catalog_version("0.33") == "0.33.0"
    with pytest.raises(ServekitError, match="no vLLM 0.99.0 flag catalog"):
        catalog_version("0.99.0")
    source = get_engine("vllm").flag_catalog("0.33.0").source
    assert source["environment"] == "minimal" and source["parser"].startswith("vllm.entrypoints.common.cli_args")


def test_diff_lists_the_changes_of_033():
    diff = _diff()
    assert set(diff.added) >= {"--monokernel", "--reasoning-effort-map", "--sleep-mode-backend", "--watchdog-config"}
    negations = {r.old: r for r in diff.renamed if r.kind == "negation"}
    assert len(negations) == 50
    assert negations["--no-enable-prefix-caching"].new == "--disable-prefix-caching"
    assert negations["--no-disable-sliding-window"].new == "--enable-sliding-window"
    assert all(r.still_parses for r in negations.values())
    kv = next(c for c in diff.choices if c.flag == "--kv-cache-dtype")
    assert kv.before and kv.after is None
    assert {d.flag for d in diff.defaults} >= {"--tool-strict-level", "--mamba-cache-mode"}


def test_engine_diff_cli_text_and_json(capsys):
    assert main(["engine", "diff", "vllm", "0.32.0", "0.33.0"]) == 0
    text = capsys.readouterr().out
    assert "added: --monokernel" in text
    assert "renamed negation: --no-enable-prefix-caching -> --disable-prefix-caching" in text
    assert main(["engine", "diff", "vllm", "0.32.0", "0.33.0", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["from"] == "0.32.0" and doc["to"] == "0.33.0" and "--watchdog-config" in doc["added"]
    assert main(["engine", "diff", "vllm", "0.32.0", "0.99.0"]) == 1
    assert "stored versions: " + ", ".join(stored_versions()) in capsys.readouterr().err


def test_lint_at_each_version():
    argv = ["vllm", "serve", "m", "--monokernel", "--disable-prefix-caching"]
    assert lint_argv("vllm", "0.33.0", argv).valid
    old = lint_argv("vllm", "0.32.0", argv)
    assert {f.option for f in old.errors} == {"--monokernel", "--disable-prefix-caching"}


def test_a_renamed_spelling_names_the_new_one():
    argv = ["vllm", "serve", "m", "--no-enable-prefix-caching"]
    new = lint_argv("vllm", "0.33.0", argv)
    assert new.valid and [f.code for f in new.findings] == ["renamed-option"]
    assert "--disable-prefix-caching" in new.findings[0].message and new.findings[0].severity == "warning"
    old = lint_argv("vllm", "0.32.0", argv)
    assert old.valid and any(f.code == "renamed-option" and "vLLM 0.33.0 renames" in f.message for f in old.findings)


def test_lint_version_option(capsys):
    assert main(["lint", "--version", "0.33.0", "--", "vllm", "serve", "m", "--monokernel"]) == 0
    assert "vllm 0.33.0: valid" in capsys.readouterr().out


def _pairs() -> list[tuple[str, str]]:
    """Each stored release with the next one, and the oldest with the newest."""
    versions = stored_versions()
    return [*zip(versions, versions[1:]), (versions[0], versions[-1])]


@pytest.mark.parametrize(("old", "new"), _pairs())
def test_the_cheap_respelling_screen_lets_every_rename_through(old, new):
    """``_respelled`` (read from the newer catalog's JSON alone) holds every option a rename of
    the full diff starts from, so screening with it never drops a rename note."""
    vllm = get_engine("vllm")
    assert new in newer_versions(old)
    renamed = {r.old for r in diff_catalogs(vllm.flag_catalog(old), vllm.flag_catalog(new)).renamed}
    assert renamed <= _respelled(old, new)


def test_the_screen_holds_the_renames_of_033():
    assert {"--no-enable-prefix-caching", "--no-disable-sliding-window"} <= _respelled("0.32.0", "0.33.0")


def test_a_lint_that_no_newer_release_renames_loads_one_flag_catalog():
    code = ("from servekit.engines.lint import lint_argv; import servekit.engines.common.flags as flags\n"
            "result = lint_argv('vllm', None, ['vllm', 'serve', 'm', '--tensor-parallel-size', '2'])\n"
            "print(result.valid, flags._load.cache_info().currsize)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "1"]
