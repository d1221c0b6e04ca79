"""What loading does to a checkpoint's bytes before they sit on the device.

* ``--dtype``: vLLM builds the model's parameters in the launch's dtype and casts the checkpoint's
  floating-point tensors into them (``vllm/model_executor/model_loader``: weights are copied into
  parameters created under ``set_default_torch_dtype(model_config.dtype)``), so an unquantized
  checkpoint loaded as ``float32`` takes twice its ``bfloat16`` bytes. A quantized checkpoint keeps
  its packed linears; only its unquantized tensors (the embedding and the LM head here) are cast.
* online quantization of an unquantized checkpoint (``--quantization fp8`` or ``ptpc_fp8``): each
  linear layer is quantized to one byte per weight after loading
  (``vllm/model_executor/layers/quantization/fp8.py`` ``Fp8LinearMethod.process_weights_after_loading``
  when the checkpoint is not FP8-serialized; per-tensor or per-channel scales are negligible),
  while the embedding and the LM head stay in the model dtype (``ParallelLMHead`` and
  ``VocabParallelEmbedding`` are not quantized). ``experts_int8`` does the same to the MoE
  experts only. Llama-3.1-8B on H100 under 0.19.0 with ``--quantization fp8`` logs "Model loading
  took 8.49 GiB" against 14.99 GiB in bf16 (llm-d-planner accuracy report); this rule gives 8.46.

The vision tower is kept at the model dtype (the safer plan: not every tower takes the quant
config).
"""

from __future__ import annotations

from servekit.facts.model import ModelFacts
from servekit.fit.dtypes import dtype_bytes
from servekit.fit.launch import LaunchSettings

ONLINE_ONE_BYTE = ("fp8", "ptpc_fp8")
"""``--quantization`` methods that quantize an unquantized checkpoint's linears to one byte at load."""
ONLINE_EXPERTS_ONE_BYTE = ("experts_int8",)
"""Methods that quantize only the MoE experts to one byte at load."""


def load_dtype(facts: ModelFacts, launch: LaunchSettings) -> str:
    """The dtype the engine builds the model in: ``--dtype`` unless ``auto``, else the config's."""
    return launch.dtype if launch.dtype and launch.dtype != "auto" else facts.dtype


def vocab_matrix_bytes(facts: ModelFacts) -> float:
    """Bytes of one vocabulary x hidden matrix (the embedding, or an untied LM head) in the
    checkpoint's dtype; 0 when the facts do not state both sizes."""
    if not facts.vocab_size or not facts.hidden_size:
        return 0.0
    return float(facts.vocab_size * facts.hidden_size * dtype_bytes(facts.dtype))


def _vocab_bytes(facts: ModelFacts) -> float:
    """The embedding and, unless tied to it, the LM head."""
    return vocab_matrix_bytes(facts) * (1 if facts.tied_embeddings else 2)


def expert_params(facts: ModelFacts) -> float:
    """Parameters of the routed experts (gate, up and down projections, or up and down where the
    MLP is ungated) as the config's shapes imply; 0 without MoE facts."""
    moe, hidden = facts.moe, facts.hidden_size
    if moe is None or not hidden:
        return 0.0
    inner = moe.moe_intermediate_size or facts.intermediate_size or 0
    pools = moe.num_experts * inner + sum(n * width for n, width in moe.modal_experts)
    return float(facts.expert_layers() * pools * facts.mlp_projections * (facts.expert_width or hidden))


def converted_bytes(facts: ModelFacts, launch: LaunchSettings, loaded: float, vision: float = 0.0) -> float:
    """Device bytes of ``loaded`` checkpoint bytes (``vision`` of them the vision tower's) once the
    launch's dtype and online quantization apply."""
    stored = dtype_bytes(facts.dtype)
    ratio = dtype_bytes(load_dtype(facts, launch)) / stored
    method = (launch.quantization or "").lower()
    if facts.quantization is not None:
        kept = _vocab_bytes(facts) + vision  # packed linears stay as they are
        return loaded + kept * (ratio - 1)
    if method in ONLINE_ONE_BYTE:
        kept = min(loaded, _vocab_bytes(facts) + vision)
        return (loaded - kept) / stored + kept * ratio
    if method in ONLINE_EXPERTS_ONE_BYTE:
        experts = min(loaded, expert_params(facts) * stored)
        return experts / stored + (loaded - experts) * ratio
    return loaded * ratio
