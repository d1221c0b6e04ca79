"""An attention variant the memory model does not cover is named in the fit as a warning, with what
the KV figures assume in its place, and the fit goes on (``ModelFacts.unmodelled``)."""

from __future__ import annotations

import json

from servekit.cli.app import main
from servekit.facts.config import facts_from_config

# the shape keys of a DeepSeek-V4-style config: MQA heads of 512 over a 128-token window, most layers
# compressing their KV (compress_ratios) behind a sparse-attention indexer
COMPRESSED = {
    "architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "hidden_size": 1024,
    "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 512,
    "sliding_window": 128, "compress_ratios": [0, 4, 128, 4, 0], "index_head_dim": 128, "index_topk": 512,
    "intermediate_size": 2048, "vocab_size": 1000, "torch_dtype": "bfloat16",
}


def test_compressed_sparse_attention_is_named_as_not_modelled():
    facts = facts_from_config(COMPRESSED)
    assert len(facts.unmodelled) == 1 and "compress_ratios" in facts.unmodelled[0]
    assert "128-token sliding window" in facts.unmodelled[0]
    assert facts_from_config({k: v for k, v in COMPRESSED.items() if k != "compress_ratios"}).unmodelled == ()


def test_the_fit_warns_and_goes_on(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps(COMPRESSED))
    code = main(["fit", str(tmp_path / "config.json"), "--hardware", "h100", "--max-model-len", "8192"])
    out = capsys.readouterr().out
    assert code == 0
    assert "the memory model does not cover compressed sparse attention" in out and "GPU KV cache size" in out
