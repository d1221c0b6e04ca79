"""Plans are checked against the flag catalog of the vLLM release they target (``--vllm-version``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from servekit.cli.app import main
from servekit.engines.registry import native_engine
from servekit.engines.vllm.versions import stored_versions

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


def test_vllm_version_without_its_own_catalog_takes_the_newest_stored_one_at_or_below(capsys):
    """``--vllm-version`` of a patch release with no stored catalog is checked with the newest stored
    release at or below it, and a note says so."""
    stored = native_engine().catalogs.versions()[-1]
    wanted = stored.rsplit(".", 1)[0] + ".99"
    code, payload, err = _plan(capsys, "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100", "--vllm-version", wanted)
    entry = payload["servekit"]["checks"]["flags"][0]
    assert entry["version"] == stored and not entry["exact"] and wanted in entry["runs"]
    notes = [f for f in entry["findings"] if f["code"] == "release-resolved"]
    assert len(notes) == 1 and wanted in notes[0]["message"] and stored in notes[0]["message"]
    assert code == 0, err


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


def _catalog_with_model_keys(tmp_path: Path, args: list[str], model_lines: str) -> Path:
    """The bundled catalog whose Llama recipe has ``args`` and extra ``model:`` keys."""
    root = _catalog_with_base_args(tmp_path, args)
    path = root / RECIPE
    text = path.read_text(encoding="utf-8")
    anchor = '  min_vllm_version: "0.6.0"\n'
    assert anchor in text
    path.write_text(text.replace(anchor, model_lines, 1), encoding="utf-8")
    return root


def _findings(payload: dict) -> list[dict]:
    return [f for entry in payload["servekit"]["checks"]["flags"] for f in entry["findings"]]


def test_findings_carry_the_release_they_were_checked_against(tmp_path, capsys):
    root = _catalog_with_base_args(tmp_path, ["--no-such-flag-anywhere"])
    _, payload, _ = _plan(capsys, "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100", "--catalog", str(root))
    assert {f["release"] for f in _findings(payload)} == {"vllm 0.32.0"}


@pytest.mark.parametrize(("model_lines", "runs"), [
    ('  min_vllm_version: "0.25.0"\n  nightly_required: true\n', "nightly"),
    ('  min_vllm_version: "0.40.0"\n', "vLLM 0.40.0 or newer"),
])
def test_a_name_unknown_to_the_pinned_catalog_in_a_recipe_beyond_it_is_a_warning(tmp_path, capsys, model_lines, runs):
    """A recipe that needs a release newer than any stored catalog may use options that release
    added: the plan starts, and the warning says which release runs and which catalog would settle it."""
    root = _catalog_with_model_keys(tmp_path, ["--brand-new-option", "--compilation-config", '{"brand_new_key": 1}'],
                                    model_lines)
    code, payload, err = _plan(capsys, "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100", "--catalog", str(root))
    entry = payload["servekit"]["checks"]["flags"][0]
    assert entry["valid"] and not entry["exact"] and runs in entry["runs"]
    found = {f["code"]: f for f in entry["findings"] if f["code"] in ("unknown-option", "unknown-key")}
    assert set(found) == {"unknown-option", "unknown-key"}
    for f in found.values():
        assert f["severity"] == "warning" and f["release"] == "vllm 0.32.0"
        assert runs in f["message"] and "would settle it" in f["fix"] and "scripts/extract_vllm_flags.py" in f["fix"]
    assert code == 0, err


def test_the_container_form_is_checked_against_the_release_its_image_carries(tmp_path, capsys):
    """An image pinned to a release with no stored catalog: the docker form warns, the native
    form (which installs the newest release) refuses and names the docker form as a fix."""
    assert "0.20.1" not in stored_versions()  # its flags are 0.20.0's and 0.20.2's: not stored
    root = _catalog_with_model_keys(tmp_path, ["--no-such-flag-anywhere"],
                                    '  min_vllm_version: "0.6.0"\n  docker_image: "vllm/vllm-openai:v0.20.1"\n')
    args = ("meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100", "--catalog", str(root))
    assert main(["plan", *args, "--docker"]) == 0
    docker_text = capsys.readouterr().out
    assert "runs vLLM 0.20.1 (the tag of vllm/vllm-openai:v0.20.1)" in docker_text
    assert "warning unknown-option" in docker_text
    code, payload, err = _plan(capsys, *args)
    native = [f for f in _findings(payload) if f["code"] == "unknown-option"]
    assert code == 1 and native[0]["severity"] == "error"
    assert "docker form (plan --docker), which runs vLLM 0.20.1" in native[0]["fix"]


def test_a_stored_release_in_the_image_tag_is_checked_exactly(tmp_path, capsys):
    root = _catalog_with_model_keys(tmp_path, ["--no-enable-prefix-caching"],
                                    '  min_vllm_version: "0.6.0"\n  docker_image: "vllm/vllm-openai:v0.33.0"\n')
    assert main(["plan", "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100", "--catalog", str(root),
                 "--docker"]) == 0
    text = capsys.readouterr().out
    assert "# flags (serve, vLLM 0.33.0): valid" in text and "--disable-prefix-caching" in text
