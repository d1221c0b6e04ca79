"""Every MAX argv servekit emits parses with the real MAX 26.7 click commands.

Runs ``max._entrypoints.pipelines.main.commands[...].make_context`` inside the MAX engine
environment (nothing is served or compiled). Skipped when that environment is not installed.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from servekit.engines.common.translation import DialectContext
from servekit.engines.environments import find_env
from servekit.engines.max.translate import translate_to_max
from servekit.engines.max.vocab import MAX_REASONING_PARSERS, MAX_TOOL_PARSERS

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]
H200 = {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 8}

PARSE = """
import json, sys
import max._entrypoints.pipelines as pipelines
out = []
for command, args in json.load(sys.stdin):
    try:
        ctx = pipelines.main.commands[command].make_context(command, list(args))
    except Exception as exc:
        out.append({"ok": False, "error": type(exc).__name__ + ": " + str(exc)})
    else:
        out.append({"ok": True, "params": {k: repr(v) for k, v in ctx.params.items()}})
print(json.dumps(out))
"""

LAUNCHES = [
    [
        "vllm",
        "serve",
        "Qwen/Qwen3-8B",
        "-tp",
        "2",
        "--max-model-len",
        "32768",
        "--max-num-seqs",
        "64",
        "--gpu-memory-utilization",
        "0.85",
        "--enable-prefix-caching",
        "--no-enable-chunked-prefill",
        "--max-num-batched-tokens",
        "8192",
        "--trust-remote-code",
        "--served-model-name",
        "qwen",
        "--reasoning-parser",
        "qwen3",
        "--tool-call-parser",
        "qwen3_coder",
        "--kv-cache-dtype",
        "fp8",
        "--quantization",
        "fp8",
        "--enforce-eager",
        "--host",
        "0.0.0.0",
        "--port",
        "8001",
        "--speculative-config",
        '{"method":"eagle3","model":"org/drafter","num_speculative_tokens":3}',
    ],
    [
        "vllm",
        "serve",
        "deepseek-ai/DeepSeek-V3",
        "-tp",
        "1",
        "-dp",
        "8",
        "--enable-expert-parallel",
        "--speculative-config",
        '{"method":"deepseek_mtp","num_speculative_tokens":2}',
        "--revision",
        "main",
    ],
    [
        "vllm",
        "serve",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--enable-lora",
        "--lora-modules",
        "a=/l/a",
        "b=/l/b",
        "--max-loras",
        "2",
        "--max-lora-rank",
        "32",
        "--dtype",
        "bfloat16",
    ],
    [
        "vllm",
        "serve",
        "Qwen/Qwen3.8-27B",
        "--speculative-config",
        '{"method":"dflash","model":"org/dflash","num_speculative_tokens":7}',
        "--quantization",
        "modelopt_fp4",
    ],
]


@pytest.fixture(scope="module")
def max_python() -> Path:
    env = find_env("max==26.7.0") or find_env("max==26.7.0", root=REPO / ".servekit-ci" / "engines")
    if env is None:
        pytest.skip("MAX 26.7.0 engine environment is not installed (servekit engine install max==26.7.0)")
    return env.python


def parse_all(python: Path, batch: list[tuple[str, list[str]]]) -> list[dict]:
    done = subprocess.run(
        [str(python), "-c", PARSE], input=json.dumps(batch), capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_translated_argvs_parse_with_the_real_max_cli(max_python):
    batch: list[tuple[str, list[str]]] = []
    for launch in LAUNCHES:
        result = translate_to_max(launch, DialectContext(hardware=H200, hardware_id="h200", options={"target": "auto"}))
        batch.append(("serve", list(result.argv[2:])))
        batch.append(("warm-cache", list(result.warm_cache_argv[2:])))
    results = parse_all(max_python, batch)
    failures = [(cmd, args, r["error"]) for (cmd, args), r in zip(batch, results) if not r["ok"]]
    assert not failures
    first = results[0]["params"]
    assert first["devices"] == "[0, 1]"
    assert first["max_length"] == "32768"
    assert first["max_batch_size"] == "64"
    assert first["speculative_method"] == "'eagle'"
    assert (
        first["quantization_encoding"].endswith("'float8_e4m3fn'>") or "float8_e4m3fn" in first["quantization_encoding"]
    )
    assert first["device_graph_capture"] == "False"
    dp = results[2]["params"]
    assert dp["data_parallel_degree"] == "8" and dp["ep_size"] == "8"
    assert results[3]["params"]["target"] == "'cuda:sm_90'"
    lora = results[4]["params"]
    assert lora["lora_paths"] == "('a=/l/a', 'b=/l/b')"


def test_the_real_parser_rejects_what_validation_rejects(max_python):
    results = parse_all(
        max_python, [("serve", ["--model-path", "m", "--bogus"]), ("serve", ["--model-path", "m", "--target", "cuda"])]
    )
    assert not results[0]["ok"] and "--bogus" in results[0]["error"]
    assert not results[1]["ok"]


def registered_names(python: Path, module: str) -> set[str]:
    """Names MAX registers with ``@register("...")`` from ``max.pipelines.lib.<module>``."""
    package = Path(
        subprocess.run(
            [str(python), "-c", "import max; print(list(max.__path__)[0])"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    names: set[str] = set()
    for path in package.rglob("*.py"):
        text = path.read_text(errors="replace")
        imports = re.findall(rf"from max\.pipelines\.lib\.{module} import (\([^)]*\)|[^\n]*)", text)
        if any(re.search(r"\bregister\b", names) for names in imports):
            names.update(re.findall(r'^@register\("([^"]+)"\)', text, flags=re.M))
    return names


def test_parser_names_are_the_installed_ones(max_python):
    assert registered_names(max_python, "tool_parsing") >= MAX_TOOL_PARSERS
    assert registered_names(max_python, "reasoning") >= MAX_REASONING_PARSERS


def test_every_reference_single_node_launch_translates_to_a_parsable_max_argv(max_python):
    from testing.shared import REFERENCE

    from servekit.catalog.documents import bundled_catalog_dir, read_yaml
    from servekit.jsonl import read_objects

    golden = REFERENCE / "golden" / "selections-visible.jsonl.xz"
    if not golden.is_file():
        pytest.skip(f"{golden} is not present")
    profiles = read_yaml(bundled_catalog_dir() / "taxonomy.yaml")["hardware_profiles"]
    seen: set[tuple[str, ...]] = set()
    batch: list[tuple[str, list[str]]] = []
    for row in read_objects(golden):
        if row["deploy_type"] != "single_node" or tuple(row["argv"]) in seen:
            continue
        seen.add(tuple(row["argv"]))
        context = DialectContext(
            hardware=profiles.get(row["hardware"]),
            hardware_id=row["hardware"],
            env=row.get("env") or {},
            options={"target": "auto"},
        )
        result = translate_to_max(row["argv"], context)
        batch += [("serve", list(result.argv[2:])), ("warm-cache", list(result.warm_cache_argv[2:]))]
    assert len(batch) > 1000
    results = parse_all(max_python, batch)
    failures = [(cmd, args, r["error"]) for (cmd, args), r in zip(batch, results) if not r["ok"]]
    assert not failures[:5]


def test_seed_warm_cache_example_and_ours_agree(max_python):
    from testing.shared import SHARED

    seed = SHARED / "seeds" / "004_max_warm_cache.txt"
    if not seed.is_file():
        pytest.skip(f"{seed} is not present")
    text = seed.read_text()
    block = text[text.index("max warm-cache \\\n  --model google/gemma-3-12b-it \\\n  --target") :].split("\n\n")[0]
    seed_args = block.replace("\\\n", " ").split()[2:]
    ours = translate_to_max(
        ["vllm", "serve", "google/gemma-3-12b-it"], DialectContext(options={"target": "cuda:sm_90"})
    )
    seed_params, our_params = (
        r["params"]
        for r in parse_all(max_python, [("warm-cache", seed_args), ("warm-cache", list(ours.warm_cache_argv[2:]))])
    )
    for key in ("model_path", "target"):
        assert seed_params[key] == our_params[key]
