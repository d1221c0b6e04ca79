"""Which parts of a quantized checkpoint stay in the model dtype, from its quantization config.

Quantization tools leave some modules unquantized and list them in the config: compressed-tensors
``ignore`` (``vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py``
``CompressedTensorsConfig.from_config``), ModelOpt ``exclude_modules`` (``modelopt.py``
``ModelOptNvFp4Config.from_config``, also under ``quantization`` of ``hf_quant_config.json``), and
``modules_to_not_convert`` (AWQ, GPTQ, bitsandbytes, Hugging Face FP8 and MXFP4 configs; vLLM's
``awq.py`` ``AWQConfig.from_config``). vLLM skips quantizing a linear whose prefix such an entry
matches (``is_layer_skipped`` / ``should_ignore_layer``), so those weights load at the model dtype.

An estimate from config.json prices the decoder by parts (``PARTS``); each listed entry is read as
the module names vLLM gives the parts (``self_attn``, ``linear_attn``, ``mlp.experts``,
``mlp.shared_expert``, ``mlp.gate``, ``mtp``) and, when it names a layer (``layers.N.``), for
that layer only. A part counts as unquantized when any of its projections is listed (so an entry
naming one projection prices its whole part at the model dtype: an upper bound). An entry that
names none of the parts (``lm_head``, the vision tower: priced at the model dtype anyway) is not
needed by the estimate.
"""

from __future__ import annotations

import re
from typing import Any

PARTS = ("attention", "linear_attention", "mlp", "experts", "shared_experts", "router", "mtp")
"""The decoder parts an estimate prices apart: full-attention projections, linear-attention
(Gated DeltaNet, Mamba) projections, a dense MLP, the routed experts, the shared experts, the
router (and shared-expert gate), the MTP head."""

MLP_PARTS = ("mlp", "experts", "shared_experts", "router")
"""The parts a listed ``mlp`` module holds (a dense MLP, or a MoE block's experts, shared experts
and router)."""

CONFIG_KEYS = ("ignore", "exclude_modules", "modules_to_not_convert")
"""The quantization config's lists of modules left unquantized (see the module docstring)."""

Unquantized = tuple[tuple[str, int | None], ...]
"""(part, layer index or None for every layer) pairs."""

_LAYER = re.compile(r"layers\.(\d+)\.")
_ROUTER = re.compile(r"(mlp\.gate|shared_expert_gate|router)(?![_a-z])")


def part_of(name: str) -> str | None:
    """The part a module name (or name pattern) lists, None when it names none of ``PARTS``."""
    text = name.lower().removeprefix("re:")
    if "mtp" in text:
        return "mtp"
    if _ROUTER.search(text):
        return "router"
    if "shared_expert" in text:
        return "shared_experts"
    if "experts" in text:
        return "experts"
    if "linear_attn" in text or "mamba" in text:
        return "linear_attention"
    if "self_attn" in text or "attention" in text:
        return "attention"
    if re.search(r"\.mlp(?:$|[.*$)])", text) or text.endswith("mlp"):
        return "mlp"
    return None


def _layer_of(name: str) -> int | None:
    found = _LAYER.search(name)
    return int(found.group(1)) if found else None


def listed_modules(q: dict[str, Any]) -> list[str]:
    """The module names or patterns a quantization config lists as left unquantized."""
    out: list[str] = []
    for holder in (q, q.get("quantization") if isinstance(q.get("quantization"), dict) else {}):
        for key in CONFIG_KEYS:
            names = holder.get(key)
            if isinstance(names, list):
                out.extend(str(n) for n in names if isinstance(n, str))
    return out


def unquantized_from_names(names: list[str]) -> Unquantized:
    """(part, layer) pairs the listed module names leave at the model dtype."""
    found: list[tuple[str, int | None]] = []
    for name in names:
        part = part_of(name)
        if part is not None and (part, _layer_of(name)) not in found:
            found.append((part, _layer_of(name)))
    return tuple(found)


def unquantized_from_config(q: dict[str, Any]) -> Unquantized:
    """(part, layer) pairs a quantization config leaves at the model dtype."""
    return unquantized_from_names(listed_modules(q))


def is_unquantized(unquantized: Unquantized, part: str, layer: int | None) -> bool:
    """Whether ``part`` of decoder layer ``layer`` (None: a part outside the layer stack) stays at
    the model dtype."""
    covering = {part, "mlp"} if part in MLP_PARTS else {part}
    return any(p in covering and (n is None or n == layer) for p, n in unquantized)
