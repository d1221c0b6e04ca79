"""The KV pool of a Gated DeltaNet hybrid with an MTP drafter, as vLLM 0.24.0-0.27.1 lays it out
(servekit.fit.kv against the engine's code, read in the 0.24.0, 0.26.0 and 0.27.1 wheels):

* the attention block size is the smallest multiple of the kernel alignment (16) whose page holds
  one GDN state (``Platform._align_hybrid_block_size``); the state's convolution part keeps
  ``kernel - 1 + num_speculative_tokens`` columns (``MambaStateShapeCalculator.gated_delta_net_state_shape``);
* the drafter's attention layer has the target's spec, so it joins the full-attention layers
  (``GPUModelRunner.get_kv_cache_spec``); groups take the smaller layer count unless the larger is
  under 1.5 times it (``_get_kv_cache_groups_uniform_page_size``);
* a request takes ``cdiv(max_model_len, block)`` blocks per attention group and ``1 +
  num_speculative_blocks`` per state group, ``2 +`` in the 'align' mode prefix caching selects for
  Qwen3.5/Qwen3-Next (``MambaSpec.max_memory_usage_bytes``, ``MambaModelConfig.verify_and_update_config``);
* the logged pool is ``int(num_blocks / blocks_per_request x max_model_len)``
  (``get_kv_cache_capacity``)."""

from __future__ import annotations

from servekit.fit.points import predict_point
from servekit.fit.sharding import GIB
from testing.kv_layout import point_layout

QWEN35_27B = {"num_hidden_layers": 64, "full_attention_interval": 4, "num_attention_heads": 24,
              "num_key_value_heads": 4, "head_dim": 256, "linear_num_key_heads": 16, "linear_num_value_heads": 48,
              "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
              "mtp_num_hidden_layers": 1, "mamba_ssm_dtype": "float32"}


def _line(spec_tokens: int, prefix_caching: bool) -> dict:
    flags = ["--max-num-seqs 2", "--max-num-batched-tokens 8192",
             f"--speculative-config '{{\"method\": \"mtp\", \"num_speculative_tokens\": {spec_tokens}}}'"]
    if prefix_caching:
        flags.append("--enable-prefix-caching")
    return {"config_facts": QWEN35_27B, "tp": 2, "max_model_len": 262144, "kv_cache_dtype": "fp8",
            "vllm_version": "0.24.0", "gpu_model": "rtx_3090", "gpu_memory_utilization": 0.92,
            "weights_gib": 28.75, "extra_flags": flags}




def test_three_draft_tokens_widen_the_state_and_so_the_attention_block():
    # per rank: conv (2 x 16 x 128 + 48 x 128) / 2 = 5120 channels x (3 + 3) columns x 2 B, recurrent
    # 24 x 128 x 128 x 4 B: 1,634,304 B; an fp8 attention token of 17 layers' pages is 1,024 B per
    # layer, so 1,596 tokens, rounded up to 1,600 (1,584 with one draft token)
    three, one = point_layout(_line(3, True)), point_layout(_line(1, True))
    assert three.block_size == 1600 and one.block_size == 1584
    assert three.groups[0].layers == 17  # 16 full-attention layers and the MTP layer
    assert three.group_size == 17 and three.num_groups == 4  # 1 attention group, 3 of 16 GDN layers + 1 padding


def test_prefix_caching_keeps_two_state_blocks_per_request_beside_the_draft_blocks():
    aligned, plain = point_layout(_line(3, True)), point_layout(_line(3, False))
    attention = -(-262144 // 1600)
    assert aligned.blocks_per_request == attention + 3 * (2 + 3) == 179
    assert plain.blocks_per_request == attention + 3 * (1 + 3) == 176


def test_the_logged_pool_of_a_0_24_launch_is_reproduced_from_its_logged_memory():
    """Qwen3.6-27B FP8 at TP2 on two RTX 3090s, vLLM 0.24.0, MTP n=3 and prefix caching: 'Available
    KV cache memory: 5.33 GiB' and 'GPU KV cache size: 300,220 tokens' (1.15x) in the same log:
    205 blocks of 17 x 1,600 x 1,024 B over 179 blocks a request. One draft token without prefix
    caching would have logged 315,487."""
    point = {**_line(3, True), "available_kv_gib_per_gpu": 5.33}
    assert predict_point(point)["kv_tokens"] == 300_220
    layout = point_layout(point)
    assert layout.blocks_for(5.33 * GIB) == 205
    assert predict_point({**_line(1, False), "available_kv_gib_per_gpu": 5.33})["kv_tokens"] == 315_487
