"""``servekit lint`` on ``max`` command lines as people write them (docs, release notes, recipes,
issues): every pipeline sub-command, renames between MAX releases, a missing model, each problem once.

The engine-tier test labels every line with MAX 26.7 itself: ``commands[name].make_context`` parses
it (what ``max`` does before running), then whether a model-loading command names a model (serve
stops with "No model specified", the others on an empty Hugging Face repo id). Lint must agree with that label on every line.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from servekit.engines.environments import find_env
from servekit.engines.max.engine import COMMANDS, ENGINE
from servekit.engines.max.renames import RENAMES
from servekit.engines.max.specs import CATALOGS

REPO = Path(__file__).resolve().parents[2]

REAL_COMMANDS = [
    "max serve --model google/gemma-3-27b-it",
    "max serve --model modularai/Llama-3.1-8B-Instruct-GGUF --port 8080",
    "max serve --model Qwen/Qwen3-8B --devices gpu:0,1 --max-batch-size 64",
    "max serve --model-path meta-llama/Llama-3.3-70B-Instruct --devices gpu:all --max-length 16384",
    "max serve --model Qwen/Qwen3-30B-A3B --quantization-encoding bfloat16 --enable-prefix-caching",
    "max serve --model deepseek-ai/DeepSeek-R1 --devices gpu:0,1,2,3,4,5,6,7 --data-parallel-degree 8",
    "max serve --model meta-llama/Llama-3.1-8B-Instruct --max-batch-input-tokens 8192 --max-batch-total-tokens 65536",
    "max serve --model meta-llama/Llama-3.1-8B-Instruct --device-memory-utilization 0.8 --trust-remote-code",
    "max serve --model meta-llama/Llama-3.1-8B-Instruct --enable-lora --lora-paths /adapters/a --max-num-loras 2",
    "max serve --model meta-llama/Llama-3.1-8B-Instruct --max-cache-batch-size 16",
    "max serve --model meta-llama/Llama-3.1-8B-Instruct --max-ce-batch-size 32",
    "max serve --model meta-llama/Llama-3.1-8B-Instruct --prefill-chunk-size 4096",
    "max serve --model meta-llama/Llama-3.1-8B-Instruct --max-batch-context-length 32768",
    "max serve --model meta-llama/Llama-3.1-8B-Instruct --cache-strategy paged",
    "max serve --model meta-llama/Llama-3.1-8B-Instruct --kv-cache-strategy continuous",
    "max serve --model meta-llama/Llama-3.1-70B-Instruct --enable-kvcache-swapping-to-host "
    "--host-kvcache-swap-space-gb 100",
    "max serve --model meta-llama/Llama-3.1-70B-Instruct --devices 0,1",
    "max serve --model meta-llama/Llama-3.1-70B-Instruct --devices=4",
    "max serve --model meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-degree 4",
    "max serve --huggingface-repo-id modularai/Llama-3.1-8B-Instruct-GGUF",
    "max serve --port 8000",
    "max serve --devices gpu:0 --max-length 8192",
    "max generate --model google/gemma-3-12b-it --prompt 'Why is the sky blue?' --max-new-tokens 128",
    "max generate --model modularai/Llama-3.1-8B-Instruct-GGUF --prompt 'I believe the meaning of life is' "
    "--temperature 0.7 --top-k 40",
    "max generate --model Qwen/Qwen2.5-VL-7B-Instruct --prompt 'Describe this image' "
    "--image_url https://example.com/cat.png --max-new-tokens 64",
    "max generate --model meta-llama/Llama-3.1-8B-Instruct --prompt hi --devices cpu --num-warmups 2",
    "max generate --prompt 'Hello there'",
    "max generate --model meta-llama/Llama-3.1-8B-Instruct --prompt hi --max-cache-batch-size 1",
    "max encode --model sentence-transformers/all-mpnet-base-v2 --prompt 'Encode me'",
    "max warm-cache --model google/gemma-3-12b-it",
    "max warm-cache --model google/gemma-3-12b-it --target cuda:sm_90",
    "max warm-cache --target hip:gfx942",
    "max warm-interpreter-cache --jobs 4",
    "max warm-interpreter-cache --check",
    "max list --json",
    "max list",
]

# Sub-commands MAX passes unknown options through (to the benchmark script): only MAX's own is checked.
PASS_THROUGH = ("benchmark",)


def lint(line: str):
    return ENGINE.lint(shlex.split(line))


def codes(line: str) -> list[str]:
    return [f.code for f in lint(line).findings if f.is_error]


def test_every_pipeline_sub_command_has_a_stored_catalog() -> None:
    for command in COMMANDS:
        assert CATALOGS.load("26.7.0", command).command == command
    assert ENGINE.commands[0] == "serve"


@pytest.mark.parametrize("command", ["generate", "encode", "warm-interpreter-cache", "list"])
def test_each_sub_command_lints_against_its_own_catalog(command: str) -> None:
    result = ENGINE.lint(["max", command, "--model", "m"] if command in ("generate", "encode") else ["max", command])
    assert result.valid, result.findings


def test_generate_options_are_not_serve_options() -> None:
    assert codes("max generate --model m --prompt hi --max-new-tokens 8") == []
    assert codes("max serve --model m --prompt hi") == ["unknown-option"]


@pytest.mark.parametrize("command", ["serve", "generate", "encode", "warm-cache"])
def test_a_model_loading_command_without_a_model_says_no_model_specified(command: str) -> None:
    (problem,) = lint(f"max {command}").errors
    assert problem.code == "max.no-model" and "No model specified" in problem.message
    assert "--model" in (problem.fix or "")
    assert lint(f"max {command} --model-path m").valid
    assert lint(f"max {command} --model=m").valid


@pytest.mark.parametrize("old", sorted(RENAMES))
def test_an_option_an_older_max_had_names_what_became_of_it(old: str) -> None:
    rename = RENAMES[old]
    (problem,) = lint(f"max serve --model m {old} 1").errors if not old.startswith("--enable") else lint(
        f"max serve --model m {old}").errors
    assert problem.option == old
    if rename.removed:
        assert problem.code == "max.removed-option" and "removed" in problem.message
    else:
        assert problem.code == "max.renamed-option" and rename.new in (problem.fix or "")
    assert rename.release and rename.source
    assert rename.verified or "not confirmed" in problem.message


def test_renamed_targets_are_current_options_and_old_names_are_not() -> None:
    serve = CATALOGS.load("26.7.0", "serve")
    for rename in RENAMES.values():
        assert serve.get(rename.old) is None
        assert rename.removed or serve.get(rename.new) is not None


def test_bare_gpu_ids_name_the_gpu_prefix_once() -> None:
    bare = (("max serve --model m --devices=4", "gpu:4"), ("max serve --model m --devices 0,1", "gpu:0,1"))
    for line, written in bare:
        (problem,) = lint(line).findings
        assert problem.option == "--devices" and written in (problem.fix or "")


def test_each_problem_is_reported_once() -> None:
    for line in REAL_COMMANDS:
        keys = [(f.code, f.option) for f in lint(line).findings if f.option]
        assert len(keys) == len(set(keys)), line


def test_benchmark_passes_its_own_options_through() -> None:
    assert lint("max benchmark --model m --dataset-name sharegpt --num-prompts 100").valid


LABEL = """
import json, sys, contextlib, io
import max._entrypoints.pipelines as pipelines
MODEL_COMMANDS = {"serve", "generate", "encode", "warm-cache"}
out = []
for command, args in json.load(sys.stdin):
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            ctx = pipelines.main.commands[command].make_context(command, list(args))
    except BaseException as exc:
        out.append({"ok": False, "why": type(exc).__name__ + ": " + str(exc)})
        continue
    no_model = command in MODEL_COMMANDS and not ctx.params.get("model_path") and not ctx.params.get("config_file")
    out.append({"ok": not no_model, "why": "No model specified" if no_model else ""})
print(json.dumps(out))
"""


@pytest.mark.engine
def test_lint_agrees_with_max_26_7_on_real_commands() -> None:
    env = find_env("max==26.7.0") or find_env("max==26.7.0", root=REPO / ".servekit-ci" / "engines")
    if env is None:
        pytest.skip("MAX 26.7.0 engine environment is not installed (servekit engine install max==26.7.0)")
    batch = [(shlex.split(line)[1], shlex.split(line)[2:]) for line in REAL_COMMANDS]
    done = subprocess.run([str(env.python), "-c", LABEL], input=json.dumps(batch), capture_output=True,
                          text=True, check=True)
    labels = json.loads(done.stdout.strip().splitlines()[-1])
    disagree = [(line, label, [f.code for f in lint(line).errors]) for line, label in zip(REAL_COMMANDS, labels)
                if lint(line).valid != label["ok"]]
    assert not disagree
    assert sum(not label["ok"] for label in labels) >= 10
