"""The tree at ``--out`` changes in whole versions: a build process killed with SIGKILL at any
point leaves the old tree or the new one, byte for byte; the next build clears what the killed
one left; a reader that opened the tree never reads a mix of two versions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from servekit.api import manifest as manifest_module
from servekit.api import swap
from servekit.api.output import locked, state_dir
from servekit.api.publish import build_api
from servekit.catalog.documents import bundled_catalog_dir

EDITED = "Qwen/Qwen3.8-27B"
KILLER = Path(__file__).with_name("build_killer.py")
OLD_TITLE, NEW_TITLE = 'title: "Qwen3.8-27B"', 'title: "Qwen3.8-27B (edited)"'


@pytest.fixture(autouse=True)
def steady_environment(monkeypatch):
    """servekit's own files may change while the suite runs (an editable install); the builds
    here, and those of build_killer.py, hold the environment part of the manifest still."""
    monkeypatch.setattr(manifest_module, "environment_digest", lambda: "steady")


@pytest.fixture
def site(tmp_path):
    """A copy of the bundled catalog, and the full trees of its two versions (before and after
    the title edit), built in other directories."""
    if not (bundled_catalog_dir() / "taxonomy.yaml").is_file():
        pytest.skip("the bundled catalog is not there yet")
    catalog = tmp_path / "catalog"
    shutil.copytree(bundled_catalog_dir(), catalog)
    versions = {}
    for name, title in (("old", OLD_TITLE), ("new", NEW_TITLE)):
        _set_title(catalog, title)
        build_api(tmp_path / f"full-{name}", catalog, jobs=2, full=True)
        versions[name] = _files(tmp_path / f"full-{name}")
    _set_title(catalog, OLD_TITLE)
    return tmp_path / "site", catalog, versions


def _set_title(catalog: Path, title: str) -> None:
    path = catalog / "models" / f"{EDITED}.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(OLD_TITLE, title, 1) if title != OLD_TITLE else text.replace(NEW_TITLE, OLD_TITLE, 1),
                    encoding="utf-8")


def _files(root: Path) -> dict[str, bytes]:
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def _killer(out: Path, catalog: Path, kill_at: int, mode: str, swap_by: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(KILLER), str(out), str(catalog), str(kill_at), mode, swap_by],
                          capture_output=True, text=True, timeout=120)


def _start_over(out: Path, catalog: Path) -> None:
    """The old version, freshly built in full, with its mirror and manifest."""
    _set_title(catalog, OLD_TITLE)
    build_api(out, catalog, jobs=2, full=True)
    _set_title(catalog, NEW_TITLE)


def _kill_points(changes: int, exchange: int) -> list[int]:
    """The first change, the middle of preparing the next version, the changes just before
    and after the swap, the middle of the clean-up after it, and the last change."""
    points = {1, exchange // 2, exchange - 1, exchange, exchange + 1, (exchange + changes) // 2, changes}
    return sorted(p for p in points if 1 <= p <= changes)


def _tidy_and_whole(out: Path, versions: dict[str, dict[str, bytes]], mirror: str) -> None:
    """The new tree in place and nothing but the manifest and the mirror (the tree it
    replaced, whole) beside it."""
    assert _files(out) == versions["new"]
    assert sorted(p.name for p in state_dir(out).iterdir()) == ["manifest.json", "mirror"]
    assert _files(state_dir(out) / "mirror") == versions[mirror]


@pytest.mark.parametrize("mode", ["incremental", "full"])
def test_a_build_killed_at_any_point_leaves_the_old_or_the_new_tree(site, mode):
    out, catalog, versions = site
    _start_over(out, catalog)
    counted = _killer(out, catalog, 0, mode, "native")
    assert counted.returncode == 0, counted.stderr
    seen = json.loads(counted.stdout.strip().splitlines()[-1])
    assert len(seen["exchanges"]) == 1
    assert _files(out) == versions["new"]
    outcomes = {}
    for kill_at in _kill_points(seen["changes"], seen["exchanges"][0]):
        _start_over(out, catalog)
        killed = _killer(out, catalog, kill_at, mode, "native")
        assert killed.returncode == -9, (kill_at, killed.stderr)
        tree = _files(out)
        assert tree in (versions["old"], versions["new"]), f"a mixed tree after a kill at change {kill_at}"
        outcomes[kill_at] = "old" if tree == versions["old"] else "new"
        after = build_api(out, catalog, jobs=2)  # clears what the killed build left
        if after.rerendered is None:  # the killed build had removed the manifest
            _tidy_and_whole(out, versions, mirror=outcomes[kill_at])
        else:  # killed before it changed anything: the manifest still vouched for the old tree
            assert (after.rerendered, outcomes[kill_at]) == (1, "old")
            _tidy_and_whole(out, versions, mirror="old")
    exchange = seen["exchanges"][0]
    assert outcomes[exchange] == "old" and outcomes[exchange + 1] == "new"
    assert all(outcome == ("old" if point <= exchange else "new") for point, outcome in outcomes.items())


def test_a_swap_made_of_renames_killed_halfway_is_put_back(site):
    """Without RENAME_EXCHANGE the swap is three renames: killed after the first, ``--out`` is
    missing until the next build puts the old tree back."""
    out, catalog, versions = site
    _start_over(out, catalog)
    counted = _killer(out, catalog, 0, "incremental", "renames")
    assert counted.returncode == 0, counted.stderr
    exchange = json.loads(counted.stdout.strip().splitlines()[-1])["exchanges"][0]
    outcomes = []
    for kill_at in (exchange + 1, exchange + 2, exchange + 3):  # each of the three renames
        _start_over(out, catalog)
        assert _killer(out, catalog, kill_at, "incremental", "renames").returncode == -9
        with locked(out):
            pass  # what every build does first
        tree = _files(out)
        assert tree in (versions["old"], versions["new"])
        outcomes.append("old" if tree == versions["old"] else "new")
        build_api(out, catalog, jobs=2)  # a full build: the swap had removed the manifest
        _tidy_and_whole(out, versions, mirror=outcomes[-1])
    assert outcomes == ["old", "old", "new"]


def test_builds_without_an_atomic_exchange_give_the_same_trees(site, monkeypatch):
    out, catalog, versions = site
    monkeypatch.setattr(swap, "native_exchange", lambda new, current: False)
    _start_over(out, catalog)
    assert build_api(out, catalog, jobs=2).rerendered == 1
    _tidy_and_whole(out, versions, mirror="old")


READER = r"""
import hashlib, json, os, sys, time
out, stop, ready, edited = sys.argv[1:5]
pairs, singles, errors, count = {}, {}, [], 0
digest = lambda data: hashlib.blake2b(data, digest_size=8).hexdigest()
def read(name, fd=None):
    handle = os.open(name if fd is not None else os.path.join(out, name), os.O_RDONLY, dir_fd=fd)
    try:
        return digest(b"".join(iter(lambda: os.read(handle, 1 << 16), b"")))
    finally:
        os.close(handle)
while not os.path.exists(stop):
    try:
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
        try:
            pair = "/".join(read(name, fd) for name in (edited + ".json", "models.json", "servekit.json"))
        finally:
            os.close(fd)
        single = read(edited + ".json")
    except OSError as exc:
        errors.append(repr(exc))
        continue
    pairs[pair] = pairs.get(pair, 0) + 1
    singles[single] = singles.get(single, 0) + 1
    count += 1
    if count == 1:
        open(ready, "w").close()
print(json.dumps({"pairs": pairs, "singles": singles, "errors": errors[:5], "count": count}))
"""


def test_a_reader_never_sees_a_mix_of_two_versions(site, tmp_path):
    """A reader opens the tree's directory once per snapshot and reads three files relative to
    it, while rebuilds swap the two versions in and out; a plain path lookup is checked too."""
    import hashlib

    out, catalog, versions = site
    digest = lambda data: hashlib.blake2b(data, digest_size=8).hexdigest()  # noqa: E731
    names = (f"{EDITED}.json", "models.json", "servekit.json")
    expected = {name: "/".join(digest(versions[name][n]) for n in names) for name in versions}
    _start_over(out, catalog)
    _set_title(catalog, OLD_TITLE)
    stop, ready = tmp_path / "stop", tmp_path / "ready"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(out), str(stop), str(ready), EDITED],
                              stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        kinds = []
        for number in range(10):
            _set_title(catalog, NEW_TITLE if number % 2 == 0 else OLD_TITLE)
            kinds.append(build_api(out, catalog, jobs=2).rerendered)
    finally:
        stop.touch()
        report = json.loads(reader.communicate(timeout=60)[0])
    assert kinds == [1] * 10
    assert report["errors"] == [] and report["count"] >= 10
    assert set(report["pairs"]) <= set(expected.values()), "a snapshot mixed two versions"
    assert set(report["singles"]) <= {p.split("/")[0] for p in expected.values()}
    assert len(report["pairs"]) == 2  # the reader ran across the swaps


def test_builds_of_one_out_take_turns(site):
    """While one build holds the lock of ``--out``, another build process waits without
    touching anything; it goes on once the lock is released, and a third one started at the
    same time also completes."""
    out, catalog, versions = site
    _start_over(out, catalog)
    before = _files(out)
    with locked(out):
        waiting = [subprocess.Popen([sys.executable, str(KILLER), str(out), str(catalog), "0", mode, "native"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for mode in ("incremental", "full")]
        time.sleep(3)
        assert [process.poll() for process in waiting] == [None, None]
        assert _files(out) == before
    for process in waiting:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    assert _files(out) == versions["new"]
    assert build_api(out, catalog, jobs=2).rerendered == 0
    _tidy_and_whole(out, versions, mirror="new")
