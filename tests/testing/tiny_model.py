"""Tiny, deterministic Hugging Face model repos written with the standard library only.

``write_tiny_llama`` produces a 2-layer Llama that real engines load (vLLM CPU, MAX): a
``config.json``, safetensors weights (one file or index + shards), a byte-level BPE
``tokenizer.json`` with a chat template, and a ``generation_config.json``. No torch, no
transformers: tests that only need the files (hub server, fit) stay fast.

``add_duplicate_formats`` adds what real repos also carry and engines never load
(``pytorch_model.bin``, ``original/``, GGUF, ONNX, a README), so download filters can be tested.
"""

from __future__ import annotations

import json
import random
import struct
from array import array
from dataclasses import dataclass
from pathlib import Path

SPECIAL_TOKENS = ("<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>", "<|im_end|>")

CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_DTYPE_CODES = {"float32": ("F32", 4), "bfloat16": ("BF16", 2)}


@dataclass(frozen=True)
class TinyLlamaShape:
    layers: int = 2
    hidden: int = 128
    heads: int = 2
    kv_heads: int = 1
    head_dim: int = 64
    intermediate: int = 256
    vocab: int = 320  # >= 256 byte tokens + the special tokens, a multiple of 64
    max_positions: int = 2048


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int], bytes]]) -> int:
    """Write ``{name: (dtype code, shape, raw little-endian bytes)}`` as a safetensors file."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (code, shape, data) in tensors.items():
        header[name] = {"dtype": code, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        fh.write(struct.pack("<Q", len(raw)))
        fh.write(raw)
        for _code, _shape, data in tensors.values():
            fh.write(data)
    return 8 + len(raw) + offset


def _tensor_bytes(rng: random.Random, count: int, dtype: str, constant: float | None) -> bytes:
    if constant is not None:  # every value the same: one value's bytes, repeated
        return _value_bytes([constant], dtype) * count
    return _value_bytes([(rng.random() - 0.5) * 0.04 for _ in range(count)], dtype)


def _value_bytes(numbers: list[float], dtype: str) -> bytes:
    values = array("f", numbers)
    if dtype == "float32":
        return values.tobytes()
    as_bits = array("I", values.tobytes())
    return array("H", (bits >> 16 for bits in as_bits)).tobytes()


def llama_tensor_shapes(shape: TinyLlamaShape) -> dict[str, list[int]]:
    """Hugging Face Llama parameter names and shapes for ``shape``."""
    h, q, kv = shape.hidden, shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    out: dict[str, list[int]] = {"model.embed_tokens.weight": [shape.vocab, h]}
    for i in range(shape.layers):
        p = f"model.layers.{i}."
        out[p + "self_attn.q_proj.weight"] = [q, h]
        out[p + "self_attn.k_proj.weight"] = [kv, h]
        out[p + "self_attn.v_proj.weight"] = [kv, h]
        out[p + "self_attn.o_proj.weight"] = [h, q]
        out[p + "mlp.gate_proj.weight"] = [shape.intermediate, h]
        out[p + "mlp.up_proj.weight"] = [shape.intermediate, h]
        out[p + "mlp.down_proj.weight"] = [h, shape.intermediate]
        out[p + "input_layernorm.weight"] = [h]
        out[p + "post_attention_layernorm.weight"] = [h]
    out["model.norm.weight"] = [h]
    out["lm_head.weight"] = [shape.vocab, h]
    return out


def _byte_level_alphabet() -> list[str]:
    """The printable stand-in character for every byte, as byte-level BPE tokenizers use."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars: dict[int, str] = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def tokenizer_document() -> dict:
    vocab = {ch: i for i, ch in enumerate(_byte_level_alphabet())}
    added = []
    for offset, token in enumerate(SPECIAL_TOKENS):
        ident = 256 + offset
        added.append(
            {
                "id": ident,
                "content": token,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        )
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": byte_level,
        "post_processor": None,
        "decoder": byte_level,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": [],
        },
    }


def _write_json(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _config(shape: TinyLlamaShape, dtype: str) -> dict:
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": shape.hidden,
        "intermediate_size": shape.intermediate,
        "num_hidden_layers": shape.layers,
        "num_attention_heads": shape.heads,
        "num_key_value_heads": shape.kv_heads,
        "head_dim": shape.head_dim,
        "vocab_size": shape.vocab,
        "max_position_embeddings": shape.max_positions,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "torch_dtype": dtype,
        "bos_token_id": 256,
        "eos_token_id": 257,
        "attention_bias": False,
        "mlp_bias": False,
    }


def _write_tokenizer(path: Path, shape: TinyLlamaShape) -> None:
    _write_json(path / "tokenizer.json", tokenizer_document())
    _write_json(
        path / "tokenizer_config.json",
        {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "bos_token": SPECIAL_TOKENS[0],
            "eos_token": SPECIAL_TOKENS[3],
            "pad_token": SPECIAL_TOKENS[1],
            "model_max_length": shape.max_positions,
            "chat_template": CHAT_TEMPLATE,
            "clean_up_tokenization_spaces": False,
        },
    )
    _write_json(
        path / "special_tokens_map.json",
        {
            "bos_token": SPECIAL_TOKENS[0],
            "eos_token": SPECIAL_TOKENS[3],
            "pad_token": SPECIAL_TOKENS[1],
        },
    )


def write_tiny_llama(
    path: str | Path, *, shape: TinyLlamaShape | None = None, dtype: str = "float32", shards: int = 1, seed: int = 0,
    fill: float | None = None,
) -> Path:
    """Write a loadable tiny Llama repo into ``path``; ``shards > 1`` adds an index. ``fill``: every
    weight that value instead of seeded random ones (quick to write, for what reads only the
    checkpoint's shapes and sizes)."""
    if dtype not in _DTYPE_CODES:
        raise ValueError(f"dtype must be one of {sorted(_DTYPE_CODES)}")
    shape = shape or TinyLlamaShape()
    root = Path(path)
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    code, width = _DTYPE_CODES[dtype]
    names = list(llama_tensor_shapes(shape).items())
    groups = [names[i::shards] for i in range(shards)] if shards > 1 else [names]
    weight_map: dict[str, str] = {}
    total = 0
    for index, group in enumerate(groups, start=1):
        file_name = "model.safetensors" if shards == 1 else f"model-{index:05d}-of-{shards:05d}.safetensors"
        tensors = {}
        for name, dims in group:
            count = 1
            for d in dims:
                count *= d
            constant = 1.0 if name.endswith("norm.weight") else fill
            tensors[name] = (code, dims, _tensor_bytes(rng, count, dtype, constant))
            total += count * width
            weight_map[name] = file_name
        write_safetensors(root / file_name, dict(sorted(tensors.items())))
    if shards > 1:
        _write_json(
            root / "model.safetensors.index.json",
            {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))},
        )
    _write_json(root / "config.json", _config(shape, dtype))
    _write_json(root / "generation_config.json", {"bos_token_id": 256, "eos_token_id": 257, "do_sample": False})
    _write_tokenizer(root, shape)
    return root


def add_duplicate_formats(path: str | Path, *, seed: int = 1) -> list[str]:
    """Add the files real repos carry beside safetensors that engines never load; returns their paths."""
    root = Path(path)
    weight_bytes = sum(p.stat().st_size for p in root.glob("*.safetensors"))
    rng = random.Random(seed)
    extras = {
        "pytorch_model.bin": weight_bytes,
        "original/consolidated.00.pth": weight_bytes,
        "model-q4_0.gguf": max(weight_bytes // 4, 1024),
        "onnx/model.onnx": weight_bytes,
    }
    written = []
    for rel, size in extras.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(rng.randbytes(size))
        written.append(rel)
    _write_json(root / "original" / "params.json", {"dim": 128, "n_layers": 2})
    (root / "README.md").write_text("# tiny llama\n\nA test model.\n", encoding="utf-8")
    (root / ".gitattributes").write_text("*.safetensors filter=lfs diff=lfs merge=lfs -text\n", encoding="utf-8")
    written += ["original/params.json", "README.md", ".gitattributes"]
    return written
