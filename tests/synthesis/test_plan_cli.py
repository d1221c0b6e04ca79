"""``servekit plan`` through the real CLI entry point (servekit.cli.app.main)."""

from __future__ import annotations

import json
import shlex

from servekit.app.batch import plan_request
from servekit.app.request import load_documents
from servekit.cli.app import main
from servekit.synthesis.shell import join_continuations
from servekit.jsonl import objects


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_plan_for_the_seed_recipe(capsys, reference_catalog):
    code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--catalog", str(reference_catalog), "--format", "json",
                         "--feature", "long_context", "--feature", "text_only")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["hardware"] == "h200" and doc["deploy_type"] == "single_node"
    assert doc["env"] == {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
    assert "--language-model-only" in doc["argv"] and "--mm-encoder-tp-mode" not in doc["argv"]
    assert shlex.split(join_continuations(doc["command"])) == doc["argv"]
    assert any("mutually exclusive" in n for n in doc["servekit"]["notes"])
    sources = [p["source"] for p in doc["servekit"]["provenance"]["serve"]["args"]]
    assert "features.long_context.args" in sources
    assert doc["servekit"]["min_vllm_version"] == "0.17.0"


def test_text_plan_shows_commands_image_install_and_why(capsys, reference_catalog):
    code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--catalog", str(reference_catalog),
                         "--hardware", "ascend_950pr", "--variant", "ascend_w8a8")
    assert code == 0, err
    assert "vllm serve Eco-Tech/Qwen3.8-27B-w8a8" in out
    assert "quay.io/ascend/vllm-ascend:qwen3.8-a5" in out
    assert "qwen3_5_mtp" in out  # the variant's default mode forces spec decoding on
    assert "uv pip install" in out and "min vLLM version: 0.17.0" in out
    assert "<- variant ascend_w8a8" in out
    assert "Traceback" not in out + err


def test_batch_keeps_order_and_reports_errors_per_line(capsys, reference_catalog, tmp_path):
    requests = [
        {"recipe": "Qwen/Qwen3.8-27B", "hardware": "h200", "variant": "default", "strategy": "single_node_tp",
         "node_count": 1, "features": ["tool_calling"], "modes": {}},
        {"recipe": "Nope/Model", "hardware": "h200", "variant": "default", "strategy": "single_node_tp",
         "node_count": 1, "features": [], "modes": {}},
        {"recipe": "Qwen/Qwen3.8-27B", "hardware": "b200", "variant": "default", "strategy": "single_node_tp",
         "node_count": 1, "features": ["spec_decoding"], "modes": {"spec_decoding": "dflash"}},
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in requests) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "plan", "--batch", str(path), "--catalog", str(reference_catalog))
    assert code == 0, err
    lines = objects(out.splitlines())
    assert len(lines) == 3
    assert lines[0]["argv"][-2:] == ["--tool-call-parser", "qwen3_coder"]
    assert "unknown recipe 'Nope/Model'" in lines[1]["error"]
    assert "dflash" in lines[2]["argv"][-1] and lines[2]["hardware"] == "b200"


def test_errors_are_one_line_and_exit_1(capsys, reference_catalog):
    cases = [
        (["--hardware", "h999"], "valid choices: local, h100"),
        (["--variant", "int3"], "valid choices: default, fp8"),
        (["--strategy", "warp"], "valid choices: single_node_tp"),
        (["--feature", "turbo"], "valid choices: tool_calling"),
        (["--mode", "spec_decoding=zzz"], "valid choices: mtp, qwen3_5_mtp, dflash, dspark"),
        (["--mode", "spec_decoding"], "FEATURE=MODE"),
        (["--mode", "bogus=x"], "valid choices: spec_decoding"),
        (["--engine", "bogus"], "unknown engine 'bogus'"),
        (["--nodes", "2"], "runs on one node"),
    ]
    for extra, expected in cases:
        code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--catalog", str(reference_catalog), *extra)
        assert code == 1, extra
        assert expected in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    code, _, err = run(capsys, "plan", "Qwen/Qwen3.8-2", "--catalog", str(reference_catalog))
    assert code == 1 and "unknown recipe" in err and "Qwen/Qwen3.8-27B" in err


def test_a_node_count_alone_picks_a_strategy_that_spans_the_nodes(capsys):
    # no --strategy: the recipe's multi-node strategy, not its one-node default refused
    code, out, err = run(capsys, "plan", "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100",
                         "--nodes", "2", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["strategy"].startswith("multi_node_") and doc["node_count"] == 2
    # a one-node strategy named with --nodes 2: the fix lists what this recipe offers on h100
    code, _, err = run(capsys, "plan", "meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100",
                       "--nodes", "2", "--strategy", "single_node_tp")
    assert code == 1 and "single_node_tp runs on one node, not 2" in err
    assert "--strategy multi_node_tp" in err and "drop --nodes" in err and len(err.strip().splitlines()) == 1


def test_a_node_count_alone_takes_a_multi_node_strategy_offered_on_that_hardware(capsys, reference_catalog):
    # DeepSeek-V4-Flash defaults to single_node_tep; of its multi-node strategies only multi_node_dep is
    # offered on h200 (multi_node_tp only on DGX Spark)
    code, out, err = run(capsys, "plan", "deepseek-ai/DeepSeek-V4-Flash", "--hardware", "h200", "--nodes", "2",
                         "--catalog", str(reference_catalog), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["strategy"], doc["node_count"]) == ("multi_node_dep", 2)


def test_too_few_nodes_for_a_strategy_names_the_count(capsys, reference_catalog):
    code, _, err = run(capsys, "plan", "moonshotai/Kimi-K3", "--hardware", "h100", "--strategy", "multi_node_tp",
                       "--nodes", "2", "--catalog", str(reference_catalog))
    assert code == 1 and "needs at least" in err
    floor = err.split("needs at least ")[1].split(" ")[0]
    assert f"(fix: --nodes {floor}, or leave --nodes out)" in err
    code, out, err = run(capsys, "plan", "moonshotai/Kimi-K3", "--hardware", "h100", "--strategy", "multi_node_tp",
                         "--nodes", floor, "--catalog", str(reference_catalog), "--format", "json")
    assert json.loads(out)["node_count"] == int(floor)


def test_no_container_image_says_which_default_was_looked_for(capsys, reference_catalog):
    # a recipe that needs a nightly vLLM on an Intel CPU: no nightly CPU image is known
    for form in (["--docker"], ["--format", "k8s"]):
        code, _, err = run(capsys, "plan", "inclusionAI/Ling-3.0-flash", "--hardware", "xeon6",
                           "--catalog", str(reference_catalog), *form)
        assert code == 1 and "(default image (intel, nightly))" in err and "pass --image IMAGE" in err, err


def test_bundled_catalog_is_the_default(capsys):
    code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["argv"][2] == "Qwen/Qwen3.8-27B"


def test_bundled_catalog_declares_exclusions_explicitly(capsys):
    code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--format", "json", "--feature", "text_only")
    assert code == 0, err
    doc = json.loads(out)
    assert "--language-model-only" in doc["argv"] and "--mm-encoder-tp-mode" not in doc["argv"]
    code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--format", "json", "--feature", "text_only",
                         "--feature", "encoder_parallel")
    assert code == 2 and "mutually exclusive" in err, err
    # a complete feature set (a batch line) keeps the later of the two, and says so
    docs = load_documents(None)
    line = {"recipe": "Qwen/Qwen3.8-27B", "hardware": "h200", "strategy": "single_node_tp",
            "features": ["text_only", "encoder_parallel"]}
    argv = plan_request(docs, line)["argv"]
    assert "--mm-encoder-tp-mode" in argv and "--language-model-only" not in argv


def test_max_engine_json_keeps_contract_keys_top_level(capsys):
    code, out, err = run(capsys, "plan", "google/gemma-3-12b-it", "--engine", "max", "--hardware", "h100",
                         "--format", "json", "--checks")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["engine"] == "max" and doc["argv"][:2] == ["max", "serve"]
    assert doc["warm_cache_argv"][:2] == ["max", "warm-cache"]
    # the MAX container's entrypoint serves: its docker form passes max serve's options alone
    image = doc["docker_argv"].index(doc["docker_image"])
    assert "modular/max" in doc["docker_image"] and doc["docker_argv"][image + 1] == "--model-path"
    assert doc["servekit"]["engine_commands"][0]["engine"] == "max"
    assert doc["servekit"]["checks"]["fit"][0]["role"] == "serve"


def test_dialect_errors_exit_1_with_findings(capsys, reference_catalog):
    code, out, err = run(capsys, "plan", "moonshotai/Kimi-K2.5", "--catalog", str(reference_catalog), "--engine", "max",
                         "--strategy", "multi_node_tp", "--nodes", "2", "--hardware", "h200", "--no-checks")
    assert code == 1
    assert "engine.multi-process" in out or "serves from one process" in out


def test_qaic_text_shows_compile_step_and_fit(capsys):
    code, out, err = run(capsys, "plan", "meta-llama/Llama-3.1-8B-Instruct", "--engine", "vllm-qaic",
                         "--hardware", "ai100_standard")
    assert code == 0, err
    assert "# before start" in out and "--quantization mxfp6" in out
    assert "## checks" in out and "fit (serve)" in out


def test_plan_that_cannot_start_exits_1_with_the_fix(tmp_path, capsys):
    """A catalog offering multi-node TP 16 for a 24-head model: the plan is shown, checks fail."""
    import shutil

    from servekit.catalog.documents import bundled_catalog_dir
    from servekit.cli.app import main

    catalog = tmp_path / "catalog"
    shutil.copytree(bundled_catalog_dir(), catalog)
    recipe = catalog / "models" / "Qwen" / "Qwen3.8-27B.yaml"
    recipe.write_text(
        recipe.read_text(encoding="utf-8").replace(
            "compatible_strategies:\n  - single_node_tp\n",
            "compatible_strategies:\n  - single_node_tp\n  - multi_node_tp\n",
        ),
        encoding="utf-8",
    )
    code = main(["plan", "Qwen/Qwen3.8-27B", "--catalog", str(catalog), "--strategy", "multi_node_tp",
                 "--nodes", "2"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "tp-attention-heads" in out and "--tensor-parallel-size 8" in out
    assert "cannot start" in err


def _broken_copy(reference_catalog, tmp_path, rel: str, content: bytes):
    import shutil

    root = tmp_path / "catalog"
    shutil.copytree(reference_catalog, root)
    (root / rel).write_bytes(content)
    return root


def test_misshapen_catalog_files_are_one_line_with_the_file(capsys, reference_catalog, tmp_path):
    recipe = "models/Qwen/Qwen3.8-27B.yaml"
    cases = [
        ("taxonomy.yaml", b"- 1\n", "taxonomy.yaml:1:1: expected a mapping at the top of the file, got list"),
        ("taxonomy.yaml", b"hardware_profiles: 5\n", "hardware_profiles: must be a mapping"),
        ("taxonomy.yaml", b"hardware_profiles:\n  h200: 3\n", "hardware_profiles.h200: a hardware profile must be"),
        (recipe, b"\xff\xfe: x\n", "Qwen3.8-27B.yaml: cannot read file: not UTF-8 text"),
        (recipe, b"- x\n", "Qwen3.8-27B.yaml:1:1: expected a mapping at the top of the file"),
    ]
    for i, (rel, content, expected) in enumerate(cases):
        root = _broken_copy(reference_catalog, tmp_path / str(i), rel, content)
        code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--catalog", str(root))
        assert code == 1, (rel, content, err)
        assert expected in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert "(fix: " in err


def test_batch_fields_of_the_wrong_type_are_an_error_line_each(capsys, reference_catalog, tmp_path):
    base = {"recipe": "Qwen/Qwen3.8-27B", "hardware": "h200", "strategy": "single_node_tp"}
    cases = [
        ({"features": "tool_calling"}, "request field 'features' must be a list of feature names, not \"tool_calling\""),
        ({"features": [True]}, "'features' must be a list of feature names, not [true]"),
        ({"modes": ["spec_decoding"]}, "'modes' must be an object of FEATURE: MODE names"),
        ({"modes": "spec_decoding=mtp"}, "'modes' must be an object of FEATURE: MODE names"),
        ({"pd_nodes": {"prefill": "x"}}, "'pd_nodes' must be an object of role: node count"),
        ({"node_count": "two"}, "node_count must be a whole number from 1 to"),
        ({"recipe": 5}, "'recipe' must be a recipe id string, not 5"),
        ({"hardware": None}, "request has no 'hardware'"),
    ]
    lines = [{**base, **extra} for extra, _ in cases]
    lines.append({"recipe": "Qwen/Qwen3.8-27B", "strategy": "single_node_tp"})
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "plan", "--batch", str(path), "--catalog", str(reference_catalog))
    assert code == 1 and "Traceback" not in err, err  # every line failed
    assert "every line of the batch file failed" in err
    results = objects(out.splitlines())
    assert len(results) == len(lines)
    for result, (_, expected) in zip(results, cases):
        assert expected in result["error"], result
    assert "request has no 'hardware'" in results[-1]["error"]


def test_batch_errors_name_their_line_and_a_non_utf8_line_is_one_of_them(capsys, reference_catalog, tmp_path):
    good = json.dumps({"recipe": "Qwen/Qwen3.8-27B", "hardware": "h200", "strategy": "single_node_tp"})
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\xff\xfe{}\n\n[1]\n" + good.encode() + b"\nnot json\n")
    code, out, err = run(capsys, "plan", "--batch", str(path), "--catalog", str(reference_catalog))
    assert code == 0 and "Traceback" not in err, err
    results = objects(out.splitlines())
    assert [r.get("error") for r in results] == [
        "line 1: not UTF-8 text", "line 3: each line must be a JSON object", None, "line 5: not JSON (Expecting value)"]
    assert results[2]["hardware"] == "h200"


def test_line_inputs_share_one_reader_for_missing_files_and_bad_bytes(capsys, tmp_path):
    for args, what in ((["plan", "--batch"], "batch file"), (["fit", "--points"], "points file")):
        code, out, err = run(capsys, *args, str(tmp_path / "missing.jsonl"))
        assert code == 1 and f"cannot read {what}" in err and len(err.strip().splitlines()) == 1, err
    path = tmp_path / "points.jsonl"
    path.write_bytes(b"\xff\n[1]\n")
    code, out, err = run(capsys, "fit", "--points", str(path))
    assert code == 1 and "Traceback" not in err, err  # every line failed
    results = objects(out.splitlines())
    assert [r["error"].split(":")[0] for r in results] == ["line 1", "line 2"]


def test_an_empty_line_input_is_one_error_line(capsys, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n  \n", encoding="utf-8")
    for args, what in ((["plan", "--batch"], "batch file"), (["fit", "--points"], "points file")):
        code, out, err = run(capsys, *args, str(path))
        assert code == 1 and out == "", (args, out)
        assert f"the {what} is empty: {path}" in err and len(err.strip().splitlines()) == 1, err


def test_lint_batch_reads_through_the_same_opener(capsys, tmp_path):
    path = tmp_path / "lint.jsonl"
    path.write_bytes(b'\xff\n{"engine": "vllm", "command": "vllm serve org/model"}\n')
    code, out, err = run(capsys, "lint", "--batch", str(path))
    assert code == 1 and "Traceback" not in err, err
    first, second = objects(out.splitlines())
    assert first["error"].startswith("line 1: ") and not first["valid"]
    assert second["valid"]
    path.write_text("\n", encoding="utf-8")
    code, out, err = run(capsys, "lint", "--batch", str(path))
    assert code == 1 and "the batch file is empty" in err, err


def test_a_misshapen_recipe_that_trips_a_plan_is_reported_by_the_validator(capsys, reference_catalog, tmp_path):
    rel = "models/Qwen/Qwen3.8-27B.yaml"
    text = (reference_catalog / rel).read_text(encoding="utf-8")
    assert "\nmodel:\n" in text
    root = _broken_copy(reference_catalog, tmp_path, rel, text.replace("\nmodel:\n", "\nmodel: 5\nwas_model:\n").encode())
    code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--catalog", str(root))
    assert code == 1 and "internal error" not in err, err
    assert f"{root / rel}:" in err and "model: expected a mapping" in err and len(err.strip().splitlines()) == 1


def test_a_misshapen_recipe_is_that_batch_lines_error(capsys, reference_catalog, tmp_path):
    rel = "models/Qwen/Qwen3.8-27B.yaml"
    text = (reference_catalog / rel).read_text(encoding="utf-8")
    root = _broken_copy(reference_catalog, tmp_path, rel, text.replace("\nmodel:\n", "\nmodel: 5\nwas_model:\n").encode())
    path = tmp_path / "in.jsonl"
    requests = [{"recipe": r, "hardware": "h200", "strategy": "single_node_tp"}
                for r in ("Qwen/Qwen3.8-27B", "Qwen/Qwen3-8B")]
    path.write_text("\n".join(json.dumps(r) for r in requests) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "plan", "--batch", str(path), "--catalog", str(root))
    assert code == 0 and "internal error" not in err, err
    broken, fine = objects(out.splitlines())
    assert broken["error"].startswith(f"line 1: {root / rel}:") and "model: expected a mapping" in broken["error"]
    assert fine["argv"][:3] == ["vllm", "serve", "Qwen/Qwen3-8B"]


def test_an_unknown_id_names_the_closest_few_after_the_hint(capsys, reference_catalog):
    code, out, err = run(capsys, "plan", "Qwen/Qwen3-8x", "--catalog", str(reference_catalog))
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    hint, closest = err.index("as a Hugging Face model"), err.index("closest: ")
    assert hint < closest and "Qwen/Qwen3-8B" in err[closest:], err
    named = err[closest + len("closest: "):].split(" (")[0].split(", ")
    assert 1 <= len(named) <= 5 and all("/" in n for n in named), err
    code, out, err = run(capsys, "plan", "some-org/some-model", "--catalog", str(reference_catalog))
    assert code == 1 and "closest" not in err and "servekit facts fetch some-org/some-model" in err, err


def test_recipe_and_checkpoint_ids_match_without_regard_to_case(capsys, reference_catalog):
    """Hugging Face ids are case-insensitive; the plan shows the catalog's spelling."""
    code, out, err = run(capsys, "plan", "google/diffusiongemma-26B-A4B-it", "--catalog", str(reference_catalog),
                         "--no-checks")
    assert code == 0, err
    assert out.startswith("# Google/diffusiongemma-26B-A4B-it on h200: variant default"), out
    code, out, err = run(capsys, "plan", "qwen/qwen3.8-27b-fp8", "--catalog", str(reference_catalog),
                         "--format", "json", "--no-checks")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["variant"] == "fp8" and doc["argv"][2] == "Qwen/Qwen3.8-27B-FP8"
    code, out, err = run(capsys, "show", "qwen/QWEN3.8-27B", "--catalog", str(reference_catalog))
    assert code == 0 and out.startswith("Qwen/Qwen3.8-27B "), (out, err)


def test_fit_and_warm_cache_report_a_misshapen_recipe_like_plan(capsys, reference_catalog, tmp_path):
    rel = "models/Qwen/Qwen3.8-27B.yaml"
    text = (reference_catalog / rel).read_text(encoding="utf-8")
    root = _broken_copy(reference_catalog, tmp_path, rel, text.replace("\nmodel:\n", "\nmodel: 5\nwas_model:\n").encode())
    for args in (["fit", "Qwen/Qwen3.8-27B", "--hardware", "h200"], ["warm-cache", "Qwen/Qwen3.8-27B", "--dry-run"]):
        code, out, err = run(capsys, *args, "--catalog", str(root))
        assert code == 1 and "internal error" not in err, (args, err)
        assert f"{root / rel}:" in err and "model: expected a mapping" in err, err


def test_a_catalog_that_is_a_file_says_so(capsys, tmp_path):
    path = tmp_path / "catalog.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--catalog", str(path))
    assert code == 1 and f"{path}: catalog is not a directory" in err, err


def test_contradicting_feature_requests_exit_2_naming_both(capsys):
    cases = [
        (["--no-feature", "tool_calling", "--feature", "tool_calling"],
         ("--feature tool_calling", "--no-feature tool_calling")),
        (["--feature", "text_only", "--feature", "encoder_parallel"],
         ("--feature text_only", "--feature encoder_parallel", "mutually exclusive")),
        (["--mode", "spec_decoding=mtp", "--no-feature", "spec_decoding"],
         ("--mode spec_decoding=mtp", "--no-feature spec_decoding")),
    ]
    for extra, named in cases:
        code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", *extra)
        assert code == 2 and len(err.strip().splitlines()) == 1, (extra, err)
        assert all(part in err for part in named), err
    code, out, err = run(capsys, "plan", "Qwen/Qwen3.8-27B", "--feature", "text_only", "--no-checks")
    assert code == 0 and "--language-model-only" in out and "--mm-encoder-tp-mode" not in out, err
