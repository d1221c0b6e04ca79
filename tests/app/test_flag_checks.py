"""Plans are checked against the flag catalog of the vLLM release they target (``--vllm-version``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from servekit.cli.app import main

BUNDLED = Path(__file__).resolve().parents[2] / "src" / "servekit" / "catalog_data"
RECIPE = Path("models/meta-llama/Llama-3.1-8B-Instruct.yaml")


def _catalog_with_base_args(tmp_path: Path, args: list[str]) -> Path:
    root = tmp_path / "catalog"
    shutil.copytree(BUNDLED, root)
    path = root / RECIPE
    text = path.read_text(encoding="utf-8")
    assert "  base_args: []\n" in text
    path.write_text(text.replace("  base_args: []\n", f"  base_args: {json.dumps(args)}\n", 1), encoding="utf-8")
    return root


def _plan(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(["plan", *argv, "--format", "json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip().startswith("{") else {}, err


def test_a_plan_carries_its_flag_check_for_the_pinned_release(capsys):
    code, payload, _ = _plan(capsys, "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100")
    assert code == 0
    flags = payload["servekit"]["checks"]["flags"]
    assert flags and all(entry["valid"] and entry["version"] == "0.32.0" for entry in flags)


def test_vllm_version_selects_the_catalog_and_names_the_new_spelling(tmp_path, capsys):
    root = _catalog_with_base_args(tmp_path, ["--no-enable-prefix-caching"])
    code, payload, _ = _plan(capsys, "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100",
                             "--catalog", str(root), "--vllm-version", "0.33.0")
    entry = payload["servekit"]["checks"]["flags"][0]
    assert entry["version"] == "0.33.0"
    texts = " ".join(f"{f['message']} {f.get('fix') or ''}" for f in entry["findings"])
    assert "--disable-prefix-caching" in texts
    assert code == (0 if entry["valid"] else 1)


@pytest.mark.parametrize("version", [None, "0.33.0"])
def test_an_unknown_flag_in_a_recipe_means_the_plan_cannot_start(tmp_path, capsys, version):
    root = _catalog_with_base_args(tmp_path, ["--no-such-flag-anywhere"])
    extra = ["--vllm-version", version] if version else []
    code, payload, err = _plan(capsys, "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100",
                               "--catalog", str(root), *extra)
    entry = payload["servekit"]["checks"]["flags"][0]
    assert not entry["valid"]
    assert any(f["severity"] == "error" and "--no-such-flag-anywhere" in f["message"] for f in entry["findings"])
    assert code == 1 and "cannot start" in err


def test_a_vllm_plan_on_a_fork_platform_is_checked_by_that_build(capsys):
    """On Ascend, plain vLLM runs as the vllm-ascend plugin: its own quantization method is valid."""
    code, payload, err = _plan(capsys, "Qwen/Qwen3.8-27B", "--hardware", "ascend_950pr", "--variant", "ascend_w8a8")
    assert payload["argv"][3:5] == ["--quantization", "ascend"]
    assert payload["servekit"]["checks"]["flags"][0]["valid"], payload["servekit"]["checks"]["flags"]
    assert code == 0, err


def test_an_engine_with_its_own_form_is_not_linted_as_vllm(capsys):
    code, payload, err = _plan(capsys, "google/gemma-3-12b-it", "--engine", "max", "--target", "cuda:sm_90")
    assert payload["servekit"]["checks"]["flags"] == []
    assert code == 0, err
