"""A small, valid catalog written into tmp_path, and helpers to break it one way at a time."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from servekit.catalog.findings import Finding
from servekit.catalog.validate import validate_catalog

TAXONOMY = """\
hardware_profiles:
  h200:
    brand: NVIDIA
    generation: hopper
    display_name: "H200"
    gpu_count: 8
    vram_gb: 1128
  b200:
    brand: NVIDIA
    generation: blackwell
    display_name: "B200"
    gpu_count: 8
    vram_gb: 1440
    compute_arch: sm100
  mi300x:
    brand: AMD
    generation: amd
    display_name: "MI300X"
    gpu_count: 8
    vram_gb: 1536
tasks:
  - id: text
    display_name: "Text"
strategies:
  - single_node_tp
  - multi_node_tp
kv_offload:
  simple:
    display_name: "Simple"
    args: ["--kv-transfer-config", "{}"]
"""

SINGLE_NODE_TP = """\
name: single_node_tp
deploy_type: single_node
display_name: "Tensor Parallel"
hardware_match:
  min_gpus: 1
  max_gpus: 8
  multi_node: false
vllm_args: []
parallel_flag: "--tensor-parallel-size"
"""

MULTI_NODE_TP = """\
name: multi_node_tp
deploy_type: multi_node
display_name: "Multi-Node Tensor Parallel"
hardware_match:
  min_gpus: 2
  multi_node: true
parallel_flag: "--tensor-parallel-size"
env:
  NCCL_SOCKET_IFNAME: "$IFACE_NAME"
"""

KV_STORE = """\
name: kv_store_demo
deploy_type: kv_store_lb
display_name: "Demo KV store"
vllm:
  vllm_args: ["--kv-transfer-config", "{}"]
  install:
    nvidia: "uv pip install demo"
min_vllm_version: "0.21.0"
default_instances: 1
"""

PLATFORMS = """\
platforms:
  - id: modal
    name: Modal
    url: https://modal.com
"""

RECIPE = """\
meta:
  title: "Model"
  slug: "model"
  provider: "Org"
  description: "A test model"
  date_added: 2026-01-02
  tasks: [text]
  platforms: [modal]
  hardware:
    h200: verified
model:
  model_id: "Org/Model"
  min_vllm_version: "0.17.0"
  architecture: dense
  parameter_count: "8B"
  context_length: 32768
  docker_image: "vllm/vllm-openai:latest"
  base_args: []
features:
  reasoning:
    description: "Reasoning parser"
    args: ["--reasoning-parser", "qwen3"]
  spec_decoding:
    description: "Spec decoding"
    default_mode: mtp
    modes:
      mtp:
        label: "MTP"
        args: ["--speculative-config", '{"method":"mtp"}']
      eagle:
        label: "EAGLE"
        variants: [default]
        args: ["--speculative-config", '{"method":"eagle3"}']
  text_only:
    description: "Text only"
    args: ["--language-model-only"]
    exclusive_with: [encoder_parallel]
  encoder_parallel:
    description: "Encoder data parallel"
    args: ["--mm-encoder-tp-mode", "data"]
    exclusive_with: [text_only]
opt_in_features: [spec_decoding, text_only]
variants:
  default:
    precision: bf16
    vram_minimum_gb: 20
  fp8:
    model_id: "Org/Model-FP8"
    precision: fp8
    vram_minimum_gb: 10
    supported_hardware: [h200, "arch:sm100"]
    default_modes:
      spec_decoding: mtp
    hardware_overrides:
      hopper:
        extra_args: ["--max-num-seqs", "8"]
compatible_strategies: [single_node_tp, multi_node_tp]
hardware_overrides:
  amd:
    extra_env:
      VLLM_ROCM_USE_AITER: "1"
kv_offload_support:
  simple: verified
guide: |
  ## Overview
"""

RECIPE_PATH = "models/Org/Model.yaml"


def line_of(text: str, snippet: str, occurrence: int = 1) -> int:
    """1-based line of the n-th line containing ``snippet``."""
    seen = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if snippet in line:
            seen += 1
            if seen == occurrence:
                return number
    raise AssertionError(f"{snippet!r} not in text")


@dataclass
class MiniCatalog:
    root: Path

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def replace(self, rel: str, old: str, new: str) -> str:
        """Edit one file in place; returns the new text. ``old`` must occur exactly once."""
        text = self.read(rel)
        assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {rel}"
        text = text.replace(old, new)
        self.write(rel, text)
        return text

    def findings(self) -> list[Finding]:
        return validate_catalog(self.root)

    def only(self, code: str) -> Finding:
        matches = [f for f in self.findings() if f.code == code]
        assert len(matches) == 1, f"expected one {code!r} finding, got {[m.render() for m in matches]}"
        return matches[0]


@pytest.fixture
def mini(tmp_path: Path) -> MiniCatalog:
    cat = MiniCatalog(tmp_path / "catalog")
    cat.write("taxonomy.yaml", TAXONOMY)
    cat.write("platforms.yaml", PLATFORMS)
    cat.write("strategies/single_node_tp.yaml", SINGLE_NODE_TP)
    cat.write("strategies/multi_node_tp.yaml", MULTI_NODE_TP)
    cat.write("kv_store/kv_store_demo.yaml", KV_STORE)
    cat.write(RECIPE_PATH, RECIPE)
    return cat
