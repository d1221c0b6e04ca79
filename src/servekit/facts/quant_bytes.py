"""Bytes per weight of a checkpoint's quantized linear layers, from its quantization config.

When no safetensors header gives exact tensor bytes, a quantized checkpoint is priced from what
its quantization method stores per weight: the packed data (``bits / 8``) plus its share of the
scales (and zero points) the method keeps beside it. Each method's layout is the one vLLM's
loader creates for it (``create_weights`` of the linear method):

* ``fp8`` (``vllm/model_executor/layers/quantization/fp8.py`` ``Fp8LinearMethod.create_weights``):
  one byte per weight; block-scaled checkpoints (``weight_block_size`` [n, k]) add one float32
  ``weight_scale_inv`` per n x k block; per-tensor and per-channel scales are one value per
  tensor or output row (nothing worth counting);
* ``int4`` / ``int8`` group-quantized (AWQ ``awq.py`` ``AWQLinearMethod.create_weights``: ``scales``
  float16 ``[in / group, out]`` and ``qzeros`` packed at the weight's bits; GPTQ ``gptq.py``
  ``GPTQLinearMethod.create_weights``: the same two, GPTQ stores ``qzeros`` even when symmetric;
  compressed-tensors ``compressed_tensors_wNa16.py``: ``weight_scale`` per group, and
  ``weight_zero_point`` only when asymmetric): per weight ``(2 + zero bits / 8) / group_size``;
  channel-wise int8 (``group_size`` None: compressed-tensors W8A8) keeps one scale per row;
* ``nvfp4`` (``modelopt.py`` ``ModelOptNvFp4LinearMethod.create_weights``: ``weight`` uint8
  ``[out, in / 2]`` and ``weight_scale`` float8_e4m3fn ``[out, in / 16]``): 0.5 + 1/16 byte;
* ``mxfp4`` (``mxfp4.py`` ``Mxfp4MoEMethod.create_weights``: uint8 scales, one per 32 weights):
  0.5 + 1/32 byte.

A config that states no group size for a group-quantized int4 checkpoint is priced with the
128-weight groups AWQ, GPTQ and compressed-tensors default to (``DEFAULT_GROUP_SIZE``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from servekit.facts.unquantized import Unquantized, unquantized_from_config
from servekit.records import record

DEFAULT_GROUP_SIZE = 128
"""Weights per scale group when an int4 config does not say (AutoAWQ's ``q_group_size`` and
AutoGPTQ's ``group_size`` default; compressed-tensors' W4A16 preset, ``group_size: 128``)."""
SCALE_BYTES = 2
"""A group scale in float16 / bfloat16 (AWQ ``scales``, GPTQ ``scales``, compressed-tensors ``weight_scale``)."""
BLOCK_SCALE_BYTES = 4
"""A block-scaled FP8 checkpoint's float32 ``weight_scale_inv`` per block."""
MICRO_SCALE = {"nvfp4": (1, 16), "mxfp4": (1, 32)}
"""(scale bytes, weights per scale) of the FP4 micro-scaled formats."""
FORMATS: dict[str, int] = {"fp8": 8, "int8": 8, "int4": 4, "nvfp4": 4, "mxfp4": 4}
"""The number formats of quantized linears servekit prices, with their bits (the kv-points
``quantization`` field takes the same: ``servekit.fit.point_fields``)."""


@record
class QuantFormat:
    """How a checkpoint stores its quantized linears."""

    method: str
    """Number format: one of ``FORMATS``."""
    bits: int
    group_size: int | None = None
    """Weights per scale (group-quantized int formats); None: one scale per output row or tensor."""
    zero_point: bool = False
    """Whether each group also stores a zero point at the weight's bits."""
    weight_block_size: tuple[int, int] | None = None
    """FP8 scale block [n, k]; None: per-tensor or per-channel scales."""
    unquantized: Unquantized = ()
    """Decoder parts the config leaves at the model dtype (``servekit.facts.unquantized``)."""

    @property
    def label(self) -> str:
        return f"{self.method} ({self.bits} bits)"


def bytes_per_weight(fmt: QuantFormat) -> float:
    """Bytes one linear weight takes on disk and after loading, scales included."""
    data = fmt.bits / 8
    if fmt.method in MICRO_SCALE:
        scale, per = MICRO_SCALE[fmt.method]
        return data + scale / per
    if fmt.method == "fp8":
        if fmt.weight_block_size:
            n, k = fmt.weight_block_size
            return data + BLOCK_SCALE_BYTES / (n * k)
        return data
    if fmt.group_size:
        zero = fmt.bits / 8 if fmt.zero_point else 0.0
        return data + (SCALE_BYTES + zero) / fmt.group_size
    return data


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None


def _group(value: Any) -> int | None:
    """A group size; -1 (GPTQ's "one group per row") and absent read as None."""
    return _int(value)


def _compressed(q: dict[str, Any]) -> QuantFormat | None:
    for group in (q.get("config_groups") or {}).values():
        weights = group.get("weights") if isinstance(group, dict) else None
        if not isinstance(weights, dict) or not _int(weights.get("num_bits")):
            continue
        bits = int(weights["num_bits"])
        if weights.get("type") == "float":
            return QuantFormat("nvfp4", 4) if bits == 4 else QuantFormat("fp8", 8, weight_block_size=_block(
                weights.get("block_structure")))
        group_size = _group(weights.get("group_size")) if weights.get("strategy") in ("group", None) else None
        if bits == 4 and group_size is None and weights.get("strategy") != "channel":
            group_size = DEFAULT_GROUP_SIZE
        return QuantFormat(f"int{bits}", bits, group_size, zero_point=weights.get("symmetric") is False)
    return None


def _block(value: Any) -> tuple[int, int] | None:
    if isinstance(value, list | tuple) and len(value) == 2 and all(_int(v) for v in value):
        return int(value[0]), int(value[1])
    return None


def format_from_config(q: dict[str, Any]) -> QuantFormat | None:
    """The format a config.json ``quantization_config`` describes, with the parts its lists of
    modules left unquantized name; None when it names none of ``FORMATS`` (e.g. a method servekit
    does not price)."""
    fmt = _format_from_config(q)
    return replace(fmt, unquantized=unquantized_from_config(q)) if fmt is not None else None


def _format_from_config(q: dict[str, Any]) -> QuantFormat | None:
    method = str(q.get("quant_method", "")).lower()
    algo = str(q.get("quant_algo") or (q.get("quantization") or {}).get("quant_algo") or "").lower()
    if method in ("fp8", "fbgemm_fp8", "ptpc_fp8") or (method == "modelopt" and "fp8" in algo):
        return QuantFormat("fp8", 8, weight_block_size=_block(q.get("weight_block_size")))
    if method in ("modelopt", "modelopt_fp4") and "fp4" in algo or method == "nvfp4":
        return QuantFormat("nvfp4", 4)
    if method == "mxfp4":
        return QuantFormat("mxfp4", 4)
    if method == "compressed-tensors":
        return _compressed(q)
    if method == "experts_int8":
        return QuantFormat("int8", 8)
    bits = _int(q.get("bits") or q.get("w_bit"))
    if q.get("load_in_4bit"):
        bits = 4
    elif q.get("load_in_8bit"):
        bits = 8
    if bits not in (4, 8):
        return None
    group_size = _group(q.get("group_size", q.get("q_group_size", DEFAULT_GROUP_SIZE)))
    zero_point = method == "gptq" or bool(q.get("zero_point", method == "awq"))
    return QuantFormat(f"int{bits}", bits, group_size, zero_point=zero_point and group_size is not None)


def format_from_point(q: dict[str, Any]) -> QuantFormat:
    """The format a kv-points line's structured ``quantization`` states (``servekit.fit.point_fields``);
    an int4 line without ``group_size`` is priced with ``DEFAULT_GROUP_SIZE`` and a zero point; its
    ``unquantized`` parts (names of ``servekit.facts.unquantized.PARTS``) stay at the model dtype
    in every layer."""
    method, bits = str(q["method"]), int(q["bits"])
    block = q.get("weight_block_size")
    unquantized = tuple((str(part), None) for part in q.get("unquantized") or ())
    if method == "int4":
        return QuantFormat(method, bits, int(q.get("group_size") or DEFAULT_GROUP_SIZE), zero_point=True,
                           unquantized=unquantized)
    if method == "int8" and q.get("group_size"):
        return QuantFormat(method, bits, int(q["group_size"]), zero_point=True, unquantized=unquantized)
    return QuantFormat(method, bits, weight_block_size=(int(block[0]), int(block[1])) if block else None,
                       unquantized=unquantized)
