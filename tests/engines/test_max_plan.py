"""Dialects applied to synthesized Plans from the bundled catalog."""

from __future__ import annotations

import pytest

from servekit.catalog.documents import read_documents, resolve_catalog_dir
from servekit.engines.plan_translate import dialect_names, translate_plan
from servekit.errors import ServekitError
from servekit.synthesis.resolve import resolve_selection
from servekit.synthesis.synthesize import synthesize

RECIPE = "Qwen/Qwen3.8-27B"


@pytest.fixture(scope="module")
def docs():
    return read_documents(resolve_catalog_dir(), only_recipes=[RECIPE])


def plan_for(docs, **choices):
    return synthesize(docs, resolve_selection(docs, RECIPE, **choices))


def test_dialects_are_listed():
    assert set(dialect_names()) == {"max", "vllm-qaic", "vllm-ascend", "sglang"}


def test_max_translation_of_a_single_node_plan(docs):
    plan = plan_for(docs, hardware="h200")
    profile = docs.taxonomy["hardware_profiles"]["h200"]
    (only,) = translate_plan(plan, "max", hardware=profile, options={"target": "auto"})
    command = only.command
    assert command.argv[:4] == ("max", "serve", "--model-path", plan.model_id)
    assert command.argv[command.argv.index("--devices") + 1].startswith("gpu:0")
    assert command.precompile[0].argv[-2:] == ("--target", "cuda:sm_90")
    vllm_flags = {t for t in plan.processes[0].argv() if isinstance(t, str) and t.startswith("--")}
    carried = {
        "--tensor-parallel-size",
        "--tool-call-parser",
        "--reasoning-parser",
        "--max-model-len",
        "--max-num-seqs",
        "--gpu-memory-utilization",
        "--enable-prefix-caching",
        "--trust-remote-code",
        "--kv-cache-dtype",
        "--speculative-config",
        "--quantization",
    }
    listed = {u.flag for u in command.untranslated}
    assert vllm_flags - carried <= listed  # every other vLLM option is reported, none silently dropped
    assert only.to_dict()["role"] == plan.processes[0].role


def test_ascend_translation_keeps_the_vllm_argv(docs):
    plan = plan_for(docs, hardware="ascend_950pr")
    profile = docs.taxonomy["hardware_profiles"]["ascend_950pr"]
    (only,) = translate_plan(plan, "vllm-ascend", hardware=profile)
    assert list(only.command.argv) == [str(t) for t in plan.processes[0].argv()]
    assert only.command.image.startswith("quay.io/ascend/vllm-ascend:")
    assert only.command.env["PYTORCH_NPU_ALLOC_CONF"] == "expandable_segments:True"


def test_the_native_engine_keeps_the_plan_and_unknown_engines_are_refused(docs):
    plan = plan_for(docs, hardware="h200")
    (only,) = translate_plan(plan, "vllm")
    assert list(only.command.argv) == [str(t) for t in plan.processes[0].argv()] and not only.command.untranslated
    with pytest.raises(ServekitError, match="unknown engine 'vlm'.*'vllm'"):
        translate_plan(plan, "vlm")


def test_explain_lists_every_part(docs):
    from servekit.engines.plan_translate import explain_commands

    plan = plan_for(docs, hardware="h200")
    commands = translate_plan(plan, "max", hardware=docs.taxonomy["hardware_profiles"]["h200"])
    lines = explain_commands(commands)
    text = "\n".join(lines)
    assert lines[0].startswith("# max: ")
    assert commands[0].command.precompile[0].command() in lines
    assert "max serve \\\n  --model-path" in text
    assert "image: docker.modular.com/modular/max-nvidia-full:26.7.0" in lines
    for item in commands[0].command.untranslated:
        assert f"not carried over: {item.flag}" in text


def test_multi_process_plans_are_refused_by_single_process_engines(docs):
    from dataclasses import replace

    plan = plan_for(docs, hardware="h200")
    two = replace(plan, processes=(plan.processes[0], replace(plan.processes[0], rank=1)), deploy_type="multi_node")
    commands = translate_plan(two, "max", hardware=docs.taxonomy["hardware_profiles"]["h200"])
    assert len(commands) == 2
    assert all("engine.multi-process" in {f.code for f in pc.command.findings} for pc in commands)
