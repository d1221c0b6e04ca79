"""The numeric fields of a kv-points line, read as numbers whatever JSON type they arrive in.

Lines are written by hand from logs: a number may come as ``"0.9"``, a length as ``"32k"``, a
version as ``19``. The reader turns such values into numbers (lengths through vLLM's own token
count reading) before anything uses them, and says which field is wrong when one is not a number
(``PointError``), so one odd line is one clear error, never a crash.
"""

from __future__ import annotations

from typing import Any

from servekit.engines.vllm.launch import parse_length
from servekit.errors import ServekitError

LENGTH_FIELDS = ("max_model_len",)
NUMBER_FIELDS = ("tp", "pp", "gpu_mem_gib", "gpu_memory_utilization", "weights_gib", "weights_gib_per_rank",
                 "available_kv_gib_per_gpu", "block_size", "measured_kv_tokens")
TEXT_FIELDS = ("vllm_version", "gpu", "kv_cache_dtype", "weights_dtype", "entrypoint")


class PointError(ServekitError):
    """A kv-points line lacks what a prediction needs."""


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", "").replace("_", ""))
    except ValueError:
        return None


def _as_number(key: str, value: Any, length: bool = False) -> Any:
    """A JSON number as it is; a numeric string as a number; None and "" as None."""
    if value is None or isinstance(value, bool) or isinstance(value, int | float):
        return value
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        number = _number(text)
        if number is not None:
            return int(number) if number == int(number) else number
        if length:
            try:
                return parse_length(text)
            except ValueError:
                pass
    raise PointError(f"{key}: {value!r} is not a number", fix=f"write {key} as a JSON number")


def normalized_point(point: dict[str, Any]) -> dict[str, Any]:
    """The line with its numeric fields (and numeric ``config_facts`` values) as numbers and its
    text fields as text."""
    if not isinstance(point, dict):
        raise PointError("a kv-points line must be a JSON object")
    out = dict(point)
    for key in NUMBER_FIELDS + LENGTH_FIELDS:
        if key in out:
            out[key] = _as_number(key, out[key], length=key in LENGTH_FIELDS)
    for key in TEXT_FIELDS:
        if out.get(key) is not None and not isinstance(out[key], str):
            out[key] = str(out[key])
    facts = out.get("config_facts")
    if isinstance(facts, dict):
        out["config_facts"] = {k: _config_value(v) for k, v in facts.items()}
    return out


def _config_value(value: Any) -> Any:
    """A config.json value, with a numeric string read as the number it spells."""
    if isinstance(value, str):
        number = _number(value.strip()) if value.strip() else None
        if number is not None:
            return int(number) if number == int(number) else number
    return value
