"""``servekit plan --format json`` carries the fit checks unless --no-checks is given."""

from __future__ import annotations

import json

from servekit.cli.app import main


def _plan(capsys, *extra: str) -> dict:
    code = main(["plan", "Qwen/Qwen3.8-27B", "--format", "json", *extra])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_json_plan_has_fit_checks_by_default(capsys):
    checks = _plan(capsys)["servekit"]["checks"]
    assert checks["fit"] and checks["fit"][0]["role"] == "serve"


def test_no_checks_leaves_them_out(capsys):
    assert "checks" not in _plan(capsys, "--no-checks")["servekit"]
