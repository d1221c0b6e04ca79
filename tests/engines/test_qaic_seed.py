"""The QAIC examples of seed 000 render exactly as the seed shows them."""

from __future__ import annotations

import ast
import json
import shlex

import pytest
from testing.shared import SHARED

from servekit.catalog.documents import bundled_catalog_dir, read_yaml
from servekit.engines.common.render import render_multiline
from servekit.engines.common.translation import DialectContext
from servekit.engines.qaic.translate import translate_qaic
from servekit.engines.vllm.launch import parse_vllm_argv

SEED = SHARED / "seeds" / "000_qaic_engine_arguments.txt"


@pytest.fixture(scope="module")
def seed_text() -> str:
    if not SEED.is_file():
        pytest.skip(f"{SEED} is not present")
    return SEED.read_text()


@pytest.fixture(scope="module")
def profiles() -> dict:
    return read_yaml(bundled_catalog_dir() / "taxonomy.yaml")["hardware_profiles"]


def seed_cli(text: str) -> str:
    """The command block under 'CLI Example' (from 'vllm serve' to its last continued line)."""
    lines = text[text.index("CLI Example") :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("vllm serve"))
    block = []
    for line in lines[start:]:
        block.append(line)
        if not line.endswith("\\"):
            break
    return "\n".join(block)


def seed_llm_calls(text: str) -> list[dict]:
    """Every ``LLM(...)`` example of the seed, as its keyword arguments (comments ignored)."""
    calls = []
    rest = text
    while "LLM(\n" in rest:
        start = rest.index("LLM(\n")
        end = rest.index("\n)", start) + 2
        tree = ast.parse(rest[start:end], mode="eval")
        calls.append({kw.arg: ast.literal_eval(kw.value) for kw in tree.body.keywords})
        rest = rest[end:]
    return calls


def additional_config(argv) -> dict:
    return parse_vllm_argv(argv).get_json("--additional-config")


def test_cli_example_renders_exactly(seed_text, profiles):
    expected = seed_cli(seed_text)
    source = [
        "vllm",
        "serve",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
        "--max-num-seqs",
        "4",
        "--max-model-len",
        "2048",
        "--long-prefill-token-threshold",
        "128",
    ]
    cmd = translate_qaic(source, DialectContext(hardware=profiles["ai100_standard"], hardware_id="ai100_standard"))
    assert render_multiline(cmd.argv) == expected
    assert shlex.split(expected.replace("\\\n", " ")) == list(cmd.argv)
    assert cmd.valid, cmd.findings


def test_speculative_decoding_example_config(seed_text, profiles):
    spd = next(c for c in seed_llm_calls(seed_text) if "draft_override_qaic_config" in c["additional_config"])
    source = [
        "vllm",
        "serve",
        spd["model"],
        "--max-model-len",
        "2048",
        "--speculative-config",
        '{"method":"draft_model","model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":3}',
    ]
    options = {"devices": [0, 1, 2, 3], "num_cores": 10, "draft_num_cores": 6}
    cmd = translate_qaic(source, DialectContext(hardware=profiles["ai100_ultra"], options=options))
    assert additional_config(cmd.argv) == spd["additional_config"]
    assert json.dumps(spd["additional_config"], separators=(",", ":")) in cmd.command()
    assert cmd.valid, cmd.findings


def test_multimodal_example_config(seed_text, profiles):
    vlm = next(c for c in seed_llm_calls(seed_text) if "height" in c["additional_config"])
    source = ["vllm", "serve", vlm["model"], "--max-model-len", "4096"]
    options = {"devices": [0, 1, 2, 3], "height": [364, 512], "width": [532, 910], "multimodal": True}
    cmd = translate_qaic(source, DialectContext(hardware=profiles["ai100_ultra"], options=options))
    assert additional_config(cmd.argv) == vlm["additional_config"]
    assert cmd.valid, cmd.findings
    assert cmd.precompile[0].argv[3] == "QEFFAutoModelForImageTextToText"
    assert cmd.precompile[0].kwargs["height"] == [364, 512]


def test_seed_examples_were_found(seed_text):
    calls = seed_llm_calls(seed_text)
    assert len(calls) == 2
    assert seed_cli(seed_text).count("\\") == 8


@pytest.mark.parametrize("recipe", ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-VL-7B-Instruct"])
@pytest.mark.parametrize("hardware", ["ai100_standard", "ai100_ultra"])
def test_bundled_qaic_plans_translate_cleanly_and_idempotently(recipe, hardware):
    from servekit.catalog.documents import read_documents, resolve_catalog_dir
    from servekit.engines.plan_translate import translate_plan
    from servekit.synthesis.resolve import resolve_selection
    from servekit.synthesis.synthesize import synthesize

    docs = read_documents(resolve_catalog_dir(), only_recipes=[recipe])
    plan = synthesize(docs, resolve_selection(docs, recipe, hardware=hardware))
    profile = docs.taxonomy["hardware_profiles"][hardware]
    (only,) = translate_plan(plan, "vllm-qaic", hardware=profile)
    command = only.command
    assert command.valid, command.findings
    assert sorted(command.argv) == sorted(str(t) for t in plan.processes[0].argv())  # already in QAIC form
    again = translate_qaic(list(command.argv), DialectContext(hardware=profile))
    assert again.argv == command.argv
    assert command.precompile[0].kwargs["num_devices"] == len(
        additional_config(command.argv)["override_qaic_config"]["device_group"]
    )
