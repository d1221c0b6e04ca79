"""``servekit fit``: recipe ids, local checkpoints, JSON output, --points, and errors."""

from __future__ import annotations

import json

import pytest

from servekit.cli.app import main
from servekit.jsonl import objects
from testing.tiny_model import TinyLlamaShape, write_tiny_llama


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_recipe_variant_on_two_5090s_fits(capsys):
    code, out, _ = _run(capsys, "fit", "Qwen/Qwen3.8-27B", "--hardware", "rtx_5090_2x", "--variant", "nvfp4",
                        "--tp", "2", "--max-model-len", "262144", "--kv-cache-dtype", "fp8", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["checkpoint"] == "Inferact/Qwen3.8-27B-NVFP4" and doc["ok"] is True
    report = doc["report"]
    assert report["tp"] == 2 and report["block_size"] == 1568
    assert report["kv_bytes_per_token"] == 16 * 2 * 2 * 256
    assert report["kv_tokens"] > 262144


def test_recipe_plan_argv_is_checked(capsys):
    code, out, _ = _run(capsys, "fit", "Qwen/Qwen3.8-27B", "--hardware", "rtx_5090", "--variant", "nvfp4",
                        "--format", "json")
    doc = json.loads(out)
    assert "--enforce-eager" in doc["argv"] and doc["report"]["max_model_len"] == 32768
    assert doc["argv"][:3] == ["vllm", "serve", "Inferact/Qwen3.8-27B-NVFP4"]
    assert code == 0


def test_fit_plans_the_smallest_layout_that_holds_the_default_context(capsys):
    """The recipe's rule puts nvfp4 on one of the two 5090s (TP 1), whose KV pool cannot hold one
    request of its 262,144-token context; the plan, and so fit, takes TP 2 instead."""
    code, out, _ = _run(capsys, "fit", "Qwen/Qwen3.8-27B", "--hardware", "rtx_5090_2x", "--variant", "nvfp4",
                        "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["report"]["tp"] == 2 and doc["report"]["max_model_len"] == 262144
    assert doc["argv"][doc["argv"].index("--tensor-parallel-size") + 1] == "2"
    code, out, _ = _run(capsys, "fit", "Qwen/Qwen3.8-27B", "--hardware", "rtx_5090_2x", "--variant", "nvfp4",
                        "--strategy", "single_node_tp", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["report"]["tp"] == 1 and doc["report"]["max_model_len"] == 262144
    finding = next(f for f in doc["findings"] if f["code"] == "fit-context")
    assert finding["fix"].startswith("--tensor-parallel-size 2")
    layout = next(f for f in doc["findings"] if f["code"] == "fit-layout")
    assert layout["fix"] == "--strategy single_node_tp --tp 2"


def test_explicit_tp_keeps_the_recipe_memory_options(capsys):
    code, out, _ = _run(capsys, "fit", "Qwen/Qwen3.8-27B", "--hardware", "rtx_5090", "--variant", "nvfp4",
                        "--tp", "1", "--format", "json")
    doc = json.loads(out)
    argv = doc["argv"]
    assert argv[:2] == ["vllm", "serve"] and doc["report"]["tp"] == 1  # the plan's own command, --tp laid over it
    assert argv[argv.index("--max-model-len") + 1] == "32768" and "--enforce-eager" in argv
    assert code == 0


@pytest.mark.parametrize("hardware,engine", [("ai100_ultra", "vllm-qaic"), ("ascend_950pr", "vllm-ascend")])
def test_explicit_tp_is_priced_under_the_engine_the_plan_runs(capsys, hardware, engine):
    """A --tp on hardware whose vLLM is a plugin or fork is the plan's launch with that TP: the
    plugin's memory rule and the recipe's overrides for the platform, not a CUDA launch."""
    model = "meta-llama/Llama-3.1-8B-Instruct" if hardware.startswith("ai100") else "Qwen/Qwen3.8-27B"
    code, out, _ = _run(capsys, "fit", model, "--hardware", hardware, "--tp", "1", "--format", "json")
    doc = json.loads(out)
    assert doc["report"]["engine"] == engine and doc["report"]["tp"] == 1
    assert doc["report"]["cudagraph_gib"] == 0 or engine != "vllm-qaic"


def test_a_layout_the_recipe_does_not_offer_is_priced_as_the_users_own_launch(capsys):
    code, out, _ = _run(capsys, "fit", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--nodes", "2", "--tp", "8",
                        "--pp", "2", "--format", "json")
    doc = json.loads(out)
    assert doc["report"]["tp"] == 8 and doc["report"]["pp"] == 2 and code in (0, 1)


def test_text_output_and_exit_code_for_a_launch_that_cannot_start(capsys):
    code, out, _ = _run(capsys, "fit", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--nodes", "2", "--tp", "16")
    assert code == 1
    assert "24 attention heads are not divisible by tensor parallel size 16" in out
    assert "fits: WILL NOT START (divisibility)" in out and "DOES NOT FIT" not in out


def test_local_checkpoint_directory(capsys, tmp_path):
    model = write_tiny_llama(tmp_path / "m", shape=TinyLlamaShape(layers=2, heads=4, kv_heads=2, head_dim=64,
                                                                   hidden=256), dtype="bfloat16")
    code, out, _ = _run(capsys, "fit", str(model), "--hardware", "xeon6", "--engine", "vllm-cpu",
                        "--cpu-kvcache-space", "1", "--max-model-len", "1024", "--format", "json")
    assert code == 0
    report = json.loads(out)["report"]
    assert report["kv_tokens"] == (1 << 30) // (2 * 2 * 2 * 64 * 2 * 128) * 128


def test_points_file_one_line_out_per_line_in(capsys, tmp_path, raw_points, structured_points):
    """The reference lines as written hold free text: by default each such field is set aside and
    named in the line's ``set_aside`` (the line still gets a figure), with ``--strict`` it is that
    line's error; with their structured fields every line is predicted and nothing is set aside."""
    raw = tmp_path / "raw.jsonl"
    raw.write_text("".join(json.dumps(p) + "\n" for _, p in raw_points), encoding="utf-8")
    code, out, _ = _run(capsys, "fit", "--points", str(raw), "--strict")
    assert code == 0 and len(out.splitlines()) == len(raw_points)
    engine_text = next(i for i, (_, p) in enumerate(raw_points) if str(p.get("vllm_version")).startswith("V0 "))
    assert "vllm_version" in json.loads(out.splitlines()[engine_text])["error"]
    code, out, _ = _run(capsys, "fit", "--points", str(raw))
    lenient = objects(out.splitlines(), "fit --points output")
    assert code == 0 and len(lenient) == len(raw_points)
    assert any(note.startswith("vllm_version set aside (") for note in lenient[engine_text]["set_aside"])
    stating_memory = [r for r, (_, p) in zip(lenient, raw_points) if p.get("gpu_mem_gib")]
    assert stating_memory and all(isinstance(r.get("kv_tokens"), int) for r in stating_memory)
    path = tmp_path / "structured.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for _, p in structured_points), encoding="utf-8")
    code, out, _ = _run(capsys, "fit", "--points", str(path))
    lines = objects(out.splitlines(), "fit --points output")
    assert code == 0 and len(lines) == len(structured_points) and not [r for r in lines if "error" in r]
    assert not [r for r in lines if "set_aside" in r]
    first = lines[0]
    assert first["kv_bytes_per_token"] == 70272 and first["kv_tokens"] == pytest.approx(715_072, rel=0.001)


@pytest.mark.parametrize("argv,needle", [
    (["fit", "Qwen/Qwen3.8-27B", "--hardware", "no_such_gpu"], "unknown hardware"),
    (["fit", "nobody/nothing", "--hardware", "h100"], "no cached model facts"),
    (["fit", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--variant", "nope"], "unknown variant 'nope'"),
    (["fit", "Qwen/Qwen3.8-27B"], "needs MODEL and --hardware"),
])
def test_bad_input_is_one_line_and_exit_1(capsys, argv, needle):
    code, _, err = _run(capsys, *argv)
    assert code == 1
    assert needle in err and "Traceback" not in err


def test_a_checkpoint_in_the_hugging_face_cache_is_planned_offline(capsys, tmp_path, monkeypatch):
    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    repo = hub / "models--org--tiny"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    write_tiny_llama(repo / "snapshots" / commit, shape=TinyLlamaShape(layers=2, heads=4, kv_heads=2, head_dim=64,
                                                                       hidden=256), dtype="bfloat16")
    code, out, _ = _run(capsys, "fit", "org/tiny", "--hardware", "h100", "--max-model-len", "2048", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["checkpoint"] == "org/tiny"
    assert doc["report"]["kv_bytes_per_token"] == 2 * 2 * 2 * 64 * 2
    assert doc["report"]["weights_known"] is True


def test_a_variant_that_fits_is_offered_when_the_planned_one_does_not(capsys):
    code, out, _ = _run(capsys, "fit", "Qwen/Qwen3.8-27B", "--hardware", "rtx_5090", "--variant", "default",
                        "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["variant"] == "default"
    assert [f["code"] for f in doc["findings"] if f["severity"] == "error"] == ["fit-weights"]
    offer = next(f for f in doc["findings"] if f["code"] == "fit-other-variant")
    assert offer["fix"] == "--variant nvfp4"
    code, _, _ = _run(capsys, "fit", "Qwen/Qwen3.8-27B", "--hardware", "rtx_5090", "--variant", "nvfp4")
    assert code == 0


def test_explicit_tp_without_a_variant_takes_the_variant_the_plan_picks(capsys):
    """A recipe whose default variant does not run on the hardware but another does: ``fit --tp``
    without ``--variant`` is checked with the variant plan picks there, not refused for the default."""
    from testing.shared import REFERENCE_CATALOG

    if not REFERENCE_CATALOG.is_dir():
        pytest.skip(f"the reference catalog is not at {REFERENCE_CATALOG}")
    model = "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16"
    code, out, err = _run(capsys, "fit", model, "--catalog", str(REFERENCE_CATALOG), "--hardware", "mi300x",
                          "--tp", "1")
    assert "does not run on 'mi300x'" not in err + out
    code, _, err = _run(capsys, "fit", model, "--catalog", str(REFERENCE_CATALOG), "--hardware", "mi300x",
                        "--variant", "default", "--tp", "1")
    assert code != 0 and "does not run on 'mi300x'" in err
