"""A catalog for prefill/decode plans on one CPU host: the bundled catalog plus a ``cpu_host``
hardware profile (two NUMA nodes), a ``pd_cpu`` strategy (prefill and decode servers behind
vllm-router, without a KV connector: none works on this machine's CPU) and a recipe serving a
model directory the test made (``recipe_text``, which other test catalogs use too)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

BUNDLED = Path(__file__).resolve().parents[2] / "src" / "servekit" / "catalog_data"
RECIPE_ID = "servekit-test/tiny-pd"
HARDWARE = "cpu_host"

STRATEGY = """name: pd_cpu
deploy_type: pd_cluster
display_name: "Prefill/Decode on one CPU host"
orientation: production
description: >
  Prefill and decode servers on one host behind vllm-router, without a KV connector.
hardware_match:
  min_gpus: 2
  multi_node: false
prefill:
  vllm_args: ["--port", "8001"]
decode:
  vllm_args: ["--port", "8002"]
parallel_flag: "--tensor-parallel-size"
router:
  policy: round_robin
"""

PROFILE = """  cpu_host:
    brand: Intel
    generation: cpu
    display_name: "CPU host"
    description: "One CPU host split into two NUMA nodes, x86 CPU backend"
    gpu_count: 2
    vram_gb: 8
    multi_node: false
    kind: cpu
    platform: cpu

"""

RECIPE = """meta:
  title: "{slug}"
  slug: "{slug}"
  provider: "servekit tests"
  description: "A two-layer Llama the tests write"
  date_added: 2026-01-01
  date_updated: 2026-01-01
  difficulty: beginner
  tasks: [text]
  hardware:
    {hardware}: verified
model:
  model_id: "{model}"
  min_vllm_version: "0.6.0"
  architecture: dense
  parameter_count: "1M"
  active_parameters: "1M"
  context_length: 2048
  base_args: {base_args}
  base_env: {{VLLM_CPU_KVCACHE_SPACE: "{kv_space}"}}
variants:
  default:
    precision: bf16
    vram_minimum_gb: 1
    description: "as written"
compatible_strategies: [{strategy}]
default_strategy: {strategy}
strategy_overrides: {{}}
"""


def pd_catalog(root: Path, model: Path, max_model_len: int = 1024, kv_space: int = 1) -> Path:
    """``root``: the bundled catalog with the CPU prefill/decode additions, serving ``model``."""
    shutil.copytree(BUNDLED, root)
    (root / "strategies" / "pd_cpu.yaml").write_text(STRATEGY, encoding="utf-8")
    taxonomy = root / "taxonomy.yaml"
    text = taxonomy.read_text(encoding="utf-8")
    assert "\n  xeon5:\n" in text
    taxonomy.write_text(text.replace("\n  xeon5:\n", "\n" + PROFILE + "  xeon5:\n", 1), encoding="utf-8")
    recipe = root / "models" / f"{RECIPE_ID}.yaml"
    recipe.parent.mkdir(parents=True)
    recipe.write_text(recipe_text(RECIPE_ID, model, HARDWARE, "pd_cpu", max_model_len, kv_space), encoding="utf-8")
    return root


def recipe_text(recipe_id: str, model: Path, hardware: str, strategy: str, max_model_len: int, kv_space: int,
                extra_args: Sequence[str] = ()) -> str:
    """Recipe ``recipe_id`` serving the model directory ``model`` as ``tiny`` on ``hardware`` with ``strategy``."""
    base_args = ["--served-model-name", "tiny", "--max-model-len", str(max_model_len), *extra_args]
    return RECIPE.format(slug=recipe_id.rsplit("/", 1)[-1], model=model, hardware=hardware, strategy=strategy,
                         base_args=json.dumps(base_args), kv_space=kv_space)
