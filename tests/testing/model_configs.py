"""Config-only checkpoint directories that no recipe names: a dense GQA model, a MoE and an MLA
model (config.json, optionally safetensors files that hold only their headers), and a catalog
that has the hardware the tests plan for.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import yaml

from servekit.catalog.documents import bundled_catalog_dir

DENSE_GQA = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "vocab_size": 128256, "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
    "tie_word_embeddings": False, "rope_theta": 500000.0,
}
MOE = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
    "intermediate_size": 6144, "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4,
    "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768,
    "vocab_size": 151936, "max_position_embeddings": 40960, "torch_dtype": "bfloat16", "tie_word_embeddings": False,
}
MLA = {
    "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
    "auto_map": {"AutoConfig": "configuration_deepseek.DeepseekV2Config",
                 "AutoModelForCausalLM": "modeling_deepseek.DeepseekV2ForCausalLM"},
    "hidden_size": 2048, "intermediate_size": 10944, "num_hidden_layers": 27, "num_attention_heads": 16,
    "num_key_value_heads": 16, "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "n_routed_experts": 64, "n_shared_experts": 2,
    "num_experts_per_tok": 6, "moe_intermediate_size": 1408, "first_k_dense_replace": 1,
    "vocab_size": 102400, "max_position_embeddings": 163840, "torch_dtype": "bfloat16",
}
CONFIGS = {"dense-gqa": DENSE_GQA, "moe": MOE, "mla": MLA}

L40S = {
    "brand": "NVIDIA", "generation": "ada", "display_name": "L40S",
    "description": "Four L40S GPUs with 48 GB each, PCIe", "gpu_count": 4, "vram_gb": 192,
    "multi_node": False, "kind": "gpu", "platform": "cuda", "compute_target": "cuda:sm_89",
    "precisions": ["fp8"], "interconnect": "pcie",
}


def write_config_dir(folder: Path, config: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def write_header_only(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> int:
    """A safetensors file holding only its header (what a range request reads); returns the bytes
    its tensors would take."""
    widths = {"BF16": 2, "F16": 2, "F32": 4, "F8_E4M3": 1, "I8": 1, "U8": 1}
    header: dict = {}
    offset = 0
    for name, (dtype, shape) in sorted(tensors.items()):
        size = widths[dtype]
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)
    return offset


def dense_tensors(config: dict) -> dict[str, tuple[str, list[int]]]:
    """Llama tensor shapes of a dense GQA config."""
    h, inter, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    head_dim = h // config["num_attention_heads"]
    kv = config["num_key_value_heads"] * head_dim
    out = {"model.embed_tokens.weight": ("BF16", [vocab, h]), "lm_head.weight": ("BF16", [vocab, h]),
           "model.norm.weight": ("BF16", [h])}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out |= {p + "self_attn.q_proj.weight": ("BF16", [h, h]), p + "self_attn.k_proj.weight": ("BF16", [kv, h]),
                p + "self_attn.v_proj.weight": ("BF16", [kv, h]), p + "self_attn.o_proj.weight": ("BF16", [h, h]),
                p + "mlp.gate_proj.weight": ("BF16", [inter, h]), p + "mlp.up_proj.weight": ("BF16", [inter, h]),
                p + "mlp.down_proj.weight": ("BF16", [h, inter]), p + "input_layernorm.weight": ("BF16", [h])}
    return out


def catalog_with_hardware(root: Path, name: str = "l40s", entry: dict | None = None) -> str | None:
    """None when the bundled catalog has hardware ``name``; else a copy of it that adds ``entry``."""
    bundled = bundled_catalog_dir()
    taxonomy = yaml.safe_load((bundled / "taxonomy.yaml").read_text(encoding="utf-8"))
    if name in (taxonomy.get("hardware_profiles") or {}):
        return None
    copy = root / "catalog"
    shutil.copytree(bundled, copy, ignore=shutil.ignore_patterns("models"))
    (copy / "models").mkdir()
    taxonomy["hardware_profiles"][name] = entry or L40S
    (copy / "taxonomy.yaml").write_text(yaml.safe_dump(taxonomy, sort_keys=False), encoding="utf-8")
    return str(copy)
