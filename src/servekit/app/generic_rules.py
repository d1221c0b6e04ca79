"""The rules of a plan made from a model's config alone, one small function each.

- remote code: ``--trust-remote-code`` when config.json names code of its own (``auto_map``) or
  its architecture is not one the pinned vLLM implements;
- quantization: vLLM reads ``quantization_config`` itself, so ``--quantization`` is never
  needed for a method it knows; one it does not know is flagged;
- tensor parallel size: the sizes that divide the attention heads (and KV heads, and linear
  attention heads) on the node's devices, smallest first;
- context: the longest ``--max-model-len`` that fits, in whole steps below the model's limit;
- CPU: the KV pool in whole GiB (``VLLM_CPU_KVCACHE_SPACE``) and vLLM's own thread binding.
"""

from __future__ import annotations

from typing import Any

from servekit.engines.registry import native_engine
from servekit.facts.config import language_config
from servekit.facts.model import ModelFacts
from servekit.fit.checks import check_divisibility
from servekit.fit.launch import LaunchSettings
from servekit.records import record
from servekit.synthesis.plan import EnvVar

CONTEXT_STEP = 1024
MIN_USEFUL_CONTEXT = 4096
"""A tensor parallel size fits when one request gets at least this much context (or the
model's whole window, when that is shorter)."""
DEFAULT_CONTEXT = 4096
"""The context planned for a config that states no ``max_position_embeddings``."""


CPU_THREADS_BIND = ("VLLM_CPU_OMP_THREADS_BIND", "auto")
"""vLLM's default binding of a CPU rank's OpenMP threads to cores (``vllm/envs.py``): each rank
gets the cores of its own NUMA node; a machine's environment may name cores or ``nobind``."""


@record
class Architecture:
    name: str | None
    kind: str | None
    """vLLM's kind for it (``text_generation``, ``multimodal``, ...); None when vLLM lacks it."""
    dropped_after: str | None = None
    """The last vLLM version that implemented it, when a later one dropped it."""


def architecture_of(config: dict[str, Any], kinds: dict[str, str], previously: dict[str, str]) -> Architecture:
    names = config.get("architectures") or language_config(config).get("architectures") or []
    name = str(names[0]) if names else None
    if name is None:
        return Architecture(None, None)
    return Architecture(name, kinds.get(name), previously.get(name))


def remote_code_reason(config: dict[str, Any], arch: Architecture) -> str | None:
    """Why the checkpoint needs ``--trust-remote-code``, or None when it does not."""
    auto_map = config.get("auto_map") or language_config(config).get("auto_map")
    if isinstance(auto_map, dict) and auto_map:
        files = sorted({str(v).split(".")[0] for v in auto_map.values() if isinstance(v, str)})
        return f"config.json: auto_map names the checkpoint's own code ({', '.join(files) or 'auto_map'})"
    if arch.name is not None and arch.kind is None:
        return f"config.json: architectures={arch.name} is not implemented in vLLM; its code comes from the checkpoint"
    return None


def quantization_method(config: dict[str, Any]) -> str | None:
    q = config.get("quantization_config") or language_config(config).get("quantization_config")
    if isinstance(q, dict) and q.get("quant_method"):
        return str(q["quant_method"])
    return None


def quantization_note(method: str | None, known: tuple[str, ...], version: str) -> tuple[str, bool] | None:
    """(note, known) about the checkpoint's quantization; None for unquantized weights."""
    if method is None:
        return None
    if method in known or method.replace("-", "_") in known:
        return (f"config.json: quantization_config.quant_method={method} -> vLLM reads it from config.json; "
                "no --quantization needed"), True
    return (f"config.json: quantization_config.quant_method={method} is not a quantization method vLLM "
            f"{version} knows; it will refuse to load the weights"), False


def divides(facts: ModelFacts, tp: int) -> bool:
    """Whether vLLM can split the model's heads (and block-quantized weights) over ``tp`` ranks."""
    findings = check_divisibility(facts, LaunchSettings(tp=tp))
    return not any(f.severity == "error" for f in findings)


def tp_candidates(facts: ModelFacts, devices: int) -> list[int]:
    """Tensor parallel sizes the node allows and the model divides, smallest first."""
    return [n for n in range(1, max(devices, 1) + 1) if divides(facts, n)]


def model_context(facts: ModelFacts) -> int:
    """The model's own context limit (``max_position_embeddings``)."""
    return facts.max_position_embeddings or DEFAULT_CONTEXT


def wanted_context(facts: ModelFacts) -> int:
    """The context a tensor parallel size must leave one request to count as fitting."""
    return min(model_context(facts), MIN_USEFUL_CONTEXT)


def planned_context(longest: int, limit: int) -> int:
    """``--max-model-len``: the model's limit when it fits, else the longest fit in whole steps."""
    if longest >= limit:
        return limit
    return longest // CONTEXT_STEP * CONTEXT_STEP if longest >= CONTEXT_STEP else longest


def heads_text(facts: ModelFacts) -> str:
    """``num_attention_heads=32, num_key_value_heads=8`` (what tensor parallelism must divide)."""
    parts = [f"num_attention_heads={facts.num_attention_heads}"]
    if facts.mla is None:
        parts.append(f"num_key_value_heads={facts.num_kv_heads}")
    else:
        parts.append("MLA (one shared latent)")
    if facts.linear is not None and facts.linear.split_heads:
        parts.append(f"{facts.linear.mixer} heads {'/'.join(map(str, facts.linear.split_heads))}")
    return ", ".join(parts)


RECIPE_NOTE = (
    "no recipe names this model, so this plan is built from its config.json alone: a recipe would add its "
    "tool-call parser (--enable-auto-tool-choice --tool-call-parser ...), its reasoning parser "
    "(--reasoning-parser ...) and settings tested per hardware; `servekit list` shows the recipes"
)


def cpu_env(kv_space_gib: int | None) -> tuple[EnvVar, ...]:
    """The env of a vLLM CPU launch: the KV pool the fit planned and the thread binding (none
    where the plan is not for a CPU)."""
    if kv_space_gib is None:
        return ()
    space_env = native_engine().launch.kv_space_env or "VLLM_CPU_KVCACHE_SPACE"
    name, bind = CPU_THREADS_BIND
    return (EnvVar(space_env, str(kv_space_gib), f"fit: the KV pool planned for this machine, {kv_space_gib} GiB"),
            EnvVar(name, bind, "vLLM's own binding of each rank's threads to its NUMA node's cores (vllm/envs.py)"))
