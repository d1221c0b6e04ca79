"""``lint --from A --to B`` on real upgrades taken from public threads (tests/engines/data/upgrade_cases.yaml).

A breakage is refused as written (``ok`` false) with each option the thread names called removed,
renamed or moved; its ``rewritten`` command splits back to the same words and passes the lint of
release B. A command that kept working is ``ok``. A case runs when a catalog of its ``to`` release
line is stored (the newest stored release at or below it has the same minor version); otherwise it
is skipped naming the release whose catalog would turn it on.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from servekit.engines.registry import get_engine
from servekit.engines.upgrade import check_upgrade

CASES = YAML(typ="safe").load((Path(__file__).parent / "data" / "upgrade_cases.yaml").read_text())["cases"]
OPTION_CODES = {"removed-option", "renamed-option", "moved-option"}
NAMING_CODES = {"removed-option", "renamed-option", "moved-option", "removed-choice", "removed-key", "renamed-key"}


def _minor(version: str) -> list[str]:
    return version.split(".")[:2]


def _runnable(case: dict) -> None:
    engine = get_engine(case["engine"])
    stored = engine.catalogs.nearest(case["to"]) if engine.catalogs else None
    if stored is None or _minor(stored) != _minor(case["to"]):
        pytest.skip(f"needs a stored {case['engine']} {case['to']} flag catalog (stored: "
                    f"{', '.join(engine.catalogs.versions()) if engine.catalogs else 'none'})")


def _check(case: dict):
    return check_upgrade(get_engine(case["engine"]), case["from"], case["to"], shlex.split(case["command"]))


def test_the_fixture_holds_enough_real_cases():
    assert len(CASES) >= 30
    assert all(c["url"].startswith("https://github.com/") for c in CASES)
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert {c["kind"] for c in CASES} == {"breakage", "kept", "default"}
    assert {c["engine"] for c in CASES} == {"vllm", "sglang"}


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "breakage"], ids=lambda c: c["id"])
def test_a_breakage_is_refused_and_names_the_option(case):
    _runnable(case)
    report = _check(case)
    assert not report.ok, [s.to_dict() for s in report.findings]
    named = {s.finding.option for s in report.findings if s.finding.code in NAMING_CODES and s.finding.is_error}
    assert set(case["options"]) <= named, (case["options"], [s.to_dict() for s in report.findings])
    for s in report.findings:
        if s.finding.code in NAMING_CODES:
            assert s.finding.fix and s.finding.release, s.to_dict()


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "breakage"], ids=lambda c: c["id"])
def test_the_rewritten_command_passes_the_lint_of_the_new_release(case):
    _runnable(case)
    report = _check(case)
    words = shlex.split(report.rewritten)
    assert shlex.join(words) == report.rewritten
    result = get_engine(case["engine"]).lint(words, report.checked_new)
    assert result.valid, [f.lint_dict() for f in result.errors]
    gone = {s.finding.option for s in report.findings if s.finding.code in OPTION_CODES}
    for option in set(case["options"]) & gone:  # an option B no longer parses is not in the rewritten command
        assert option not in words and not any(w.startswith(option + "=") for w in words)


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "kept"], ids=lambda c: c["id"])
def test_a_command_that_kept_working_is_ok(case):
    _runnable(case)
    report = _check(case)
    assert report.ok, [s.to_dict() for s in report.findings if s.finding.is_error]
    assert get_engine(case["engine"]).lint(shlex.split(report.rewritten), report.checked_new).valid


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "default"], ids=lambda c: c["id"])
def test_a_changed_default_gives_a_finding(case):
    _runnable(case)
    report = _check(case)
    codes = {s.finding.code for s in report.findings}
    assert set(case["codes"]) <= codes
    assert all(s.source for s in report.findings if s.finding.code == "changed-default" and not s.finding.option)
