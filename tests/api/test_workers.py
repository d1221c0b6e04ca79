"""Forked build workers: results in order, errors carried back to the parent."""

from __future__ import annotations

import os

import pytest

from servekit.api.workers import WorkerError, can_fork, fork_map
from servekit.errors import ServekitError


def _square_with_pid(n: int) -> tuple[int, int]:
    return n * n, os.getpid()


def test_results_keep_item_order_and_extra_items_run_elsewhere():
    results = fork_map(_square_with_pid, [1, 2, 3])
    assert [r[0] for r in results] == [1, 4, 9]
    assert results[0][1] == os.getpid()
    if can_fork():
        assert {r[1] for r in results[1:]}.isdisjoint({os.getpid()})


def _fail_expected(n: int) -> int:
    if n == 2:
        raise ServekitError("recipe 2 is broken", fix="fix recipe 2")
    return n


def _fail_bug(n: int) -> int:
    if n == 2:
        raise KeyError("oops")
    return n


@pytest.mark.skipif(not can_fork(), reason="builds fork workers on Linux only")
def test_an_expected_error_in_a_worker_is_one_servekit_error():
    with pytest.raises(WorkerError, match="recipe 2 is broken"):
        fork_map(_fail_expected, [1, 2])


@pytest.mark.skipif(not can_fork(), reason="builds fork workers on Linux only")
def test_a_bug_in_a_worker_surfaces_with_its_traceback():
    with pytest.raises(RuntimeError, match="KeyError"):
        fork_map(_fail_bug, [1, 2])


def test_a_single_item_runs_in_process():
    assert fork_map(_square_with_pid, [5]) == [(25, os.getpid())]
