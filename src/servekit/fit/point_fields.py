"""The fields of a kv-points line, read as structured values or refused with the field's name.

Lines are written by hand from logs. Numbers may arrive as text (``"0.9"``, a length as
``"32k"``): they are read as the numbers they spell (lengths through vLLM's own token count
reading). Every other field the memory model reads has one structured form, and a value in none
of them is one ``PointError`` naming the field, never a guess:

* ``vllm_version``: a release, a development build or release candidate in PEP 440 form, or an
  approximate release (``servekit.fit.versions.read_version``);
* either of ``vllm_version`` and ``kv_cache_dtype`` may carry one parenthesized remark after its
  value, as logs get copied (``0.19.0 (vllm/vllm-openai:v0.19.0)``, ``fp8 (e4m3)``): the value
  before the parenthesis is read in its form above and the remark never is (``without_remark``);
* ``engine``: ``v0`` or ``v1`` (the engine that ran, when the line states it);
* ``gpu_model``: an id of the device table (``servekit.hardware.device_memory``), of a GPU the
  device speed table knows by its datasheet size (``servekit.fit.gpu_models.GPU_MODEL_IDS``), or
  ``cpu``;
  ``interconnect``: ``nvlink``, ``pcie`` or ``xgmi`` (how the node's GPUs are linked, when it is
  not the part's usual form);
* ``kv_cache_dtype``: one of vLLM's ``--kv-cache-dtype`` choices; ``entrypoint``: ``server`` or
  ``offline``; ``enforce_eager``: true or false;
* ``quantization``: ``{"method": FORMAT, "bits": N}`` with the number format of the quantized
  linears and their bits, plus ``weight_block_size: [n, k]`` for block-scaled FP8 and
  ``group_size: N`` for a group-quantized int format, and ``unquantized: [PART, ...]`` for the
  decoder parts the checkpoint's quantization config leaves at the model dtype in every layer
  (its ``ignore`` / ``exclude_modules`` / ``modules_to_not_convert`` list, read into
  ``servekit.facts.unquantized.PARTS``; the row's ``source`` or the table's reason cites the config);
* ``extra_flags``: vLLM arguments as a shell would pass them (each entry starts with a ``--``
  flag; a ``--speculative-config`` value is the JSON vLLM reads) or ``NAME=VALUE`` environment
  entries; ``env``: an object of environment variables;
* ``config_facts``: config.json keys (numbers, lists, objects), with ``multimodal`` (true or false)
  and ``attention_layers`` (``{"full": n, "sliding": n, "linear": n}``, summing to
  ``num_hidden_layers``) as the points' own structured keys.

Free text (``notes``, ``source``, ``config_source``, ``gpu``, ``weights_dtype``, ``arch_type``, a
``config_facts`` description such as ``attention`` or ``moe``) is never read.

``normalized_point`` refuses a field in none of its forms; ``readable_point`` sets it aside
instead (read as unstated, ``SET_ASIDE_READS_AS``) and names it, so a line written elsewhere
still gets a prediction that says what it did not read.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from servekit.engines.vllm.launch import parse_length
from servekit.errors import ServekitError
from servekit.facts.quant_bytes import FORMATS
from servekit.facts.unquantized import PARTS
from servekit.fit.dtypes import KV_CACHE_DTYPES
from servekit.fit.launch import LaunchArgsError, launch_settings
from servekit.fit.versions import ENGINES, VersionTextError, read_version, release_series
from servekit.fit.gpu_models import GPU_MODEL_IDS

LENGTH_FIELDS = ("max_model_len",)
NUMBER_FIELDS = ("tp", "pp", "gpu_mem_gib", "gpu_memory_utilization", "weights_gib", "weights_gib_per_rank",
                 "available_kv_gib_per_gpu", "block_size", "measured_kv_tokens")
CPU_MODEL = "cpu"
"""The ``gpu_model`` of a launch on vLLM's CPU backend (not a row of the device table)."""
INTERCONNECTS = ("nvlink", "pcie", "xgmi")
ENTRYPOINTS = ("server", "offline")
QUANT_BITS: dict[str, int] = FORMATS
"""Number formats of quantized linears a point may state, with their bits."""
LAYER_KINDS = ("full", "sliding", "linear")
ENV_ENTRY = re.compile(r"^([A-Z][A-Z0-9_]*)=(\S*)$")


class PointError(ServekitError):
    """A kv-points line lacks what a prediction needs, or states it in a form servekit does not read."""


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


def _choice(key: str, value: Any, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise PointError(f"{key}: {value!r} is not one of {', '.join(choices)}",
                         fix=f"write {key} as one of: {', '.join(choices)}")
    return value


def _switch(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise PointError(f"{key}: {value!r} is not true or false", fix=f"write {key} as true or false")
    return value


REMARK = re.compile(r"([^()]+?)\s*\([^()]*\)")
"""A value followed by one parenthesized remark and nothing else."""


def without_remark(value: Any) -> Any:
    """``value`` without one trailing parenthesized remark (``"fp8 (e4m3)"`` -> ``"fp8"``); any
    other value as it is. The remark is dropped unread, so ``"0.19.0 (~0.11)"`` is 0.19.0 and
    ``"auto (fp8)"`` is auto."""
    if isinstance(value, str):
        found = REMARK.fullmatch(value.strip())
        if found:
            return found.group(1).strip()
    return value


def _version(value: Any) -> str:
    value = without_remark(value)
    if not isinstance(value, str):
        raise PointError(f"vllm_version: {value!r} is not a version text", fix="write the version as a string")
    try:
        read_version(value)
    except VersionTextError as exc:
        raise PointError(f"vllm_version: {exc.message}", fix=exc.fix) from None
    return value.strip()


def _quantization(value: Any) -> dict[str, Any]:
    formats = ", ".join(QUANT_BITS)
    fix = f'write {{"method": FORMAT, "bits": N}} with FORMAT one of {formats} (and weight_block_size [n, k], ' \
          'or an int format\'s group_size)'
    if not isinstance(value, dict) or set(value) - {"method", "bits", "weight_block_size", "group_size", "unquantized"}:
        raise PointError(f"quantization: {value!r} is not a quantization object", fix=fix)
    method, bits = value.get("method"), value.get("bits")
    if method not in QUANT_BITS or bits != QUANT_BITS[method] or isinstance(bits, bool):
        raise PointError(f"quantization: method {method!r} with bits {bits!r} is not a known format", fix=fix)
    block = value.get("weight_block_size")
    if block is not None and not (method == "fp8" and isinstance(block, list) and len(block) == 2
                                  and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in block)):
        raise PointError(f"quantization.weight_block_size: {block!r} is not an FP8 scale block [n, k]", fix=fix)
    group = value.get("group_size")
    if group is not None and not (method.startswith("int") and isinstance(group, int) and not isinstance(group, bool)
                                  and group > 0):
        raise PointError(f"quantization.group_size: {group!r} is not a group size of an int format", fix=fix)
    parts = value.get("unquantized")
    if parts is not None and not (isinstance(parts, list) and all(p in PARTS for p in parts)):
        raise PointError(f"quantization.unquantized: {parts!r} is not a list of decoder parts",
                         fix=f"list the parts the config leaves unquantized, each one of {', '.join(PARTS)}")
    return dict(value)


def _flag_entry(where: str, entry: Any) -> None:
    """One ``extra_flags`` entry: a vLLM argument or a ``NAME=VALUE`` environment entry."""
    if not isinstance(entry, str):
        raise PointError(f"{where}: {entry!r} is not an argument string")
    if ENV_ENTRY.match(entry.strip()):
        return
    try:
        words = shlex.split(entry)
    except ValueError:
        words = []
    if not words or not words[0].startswith("--"):
        raise PointError(f"{where}: {entry!r} is not a vLLM argument or a NAME=VALUE environment entry",
                         fix="write the flag as vLLM takes it (--name value), or leave the entry out")
    _launch(where, [entry])


def flag_argv(flags: list[str]) -> list[str]:
    """The argv of a line's flag entries (environment entries left out)."""
    return [word for flag in flags if not ENV_ENTRY.match(flag.strip()) for word in shlex.split(flag)]


def _launch(where: str, flags: list[str]) -> None:
    """The entries as vLLM's argument reading takes them (``servekit.fit.launch``), or a PointError."""
    try:
        launch_settings(flag_argv(flags))
    except LaunchArgsError as exc:
        raise PointError(f"{where}: {exc.message}", fix=exc.fix or "write the value as vLLM reads it") from None


def _flags(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise PointError("extra_flags must be a list of argument strings", fix='write ["--flag value", ...]')
    for index, entry in enumerate(value):
        _flag_entry(f"extra_flags[{index}]", entry)
    _launch("extra_flags", value)
    return list(value)


def _env(value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str | int | float) for v in value.values()):
        raise PointError("env must be an object of environment variables", fix='write {"NAME": "value"}')
    return {str(k): str(v) for k, v in value.items()}


def _attention_layers(value: Any, layers: Any) -> dict[str, int]:
    fix = f'write {{"full": n, "sliding": n, "linear": n}} (kinds: {", ".join(LAYER_KINDS)}) summing to the layers'
    if (not isinstance(value, dict) or set(value) - set(LAYER_KINDS)
            or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value.values())):
        raise PointError(f"config_facts.attention_layers: {value!r} is not a count per layer kind", fix=fix)
    if isinstance(layers, int) and sum(value.values()) != layers:
        raise PointError(f"config_facts.attention_layers: {value!r} does not add up to {layers} layers", fix=fix)
    return dict(value)


def _config_facts(facts: dict[str, Any]) -> dict[str, Any]:
    out = {k: _config_value(v) for k, v in facts.items()}
    if "multimodal" in out and not isinstance(out["multimodal"], bool):
        raise PointError(f"config_facts.multimodal: {out['multimodal']!r} is not true or false",
                         fix="write multimodal: true when the checkpoint holds a vision tower, else false")
    if "attention_layers" in out:
        out["attention_layers"] = _attention_layers(out["attention_layers"], out.get("num_hidden_layers"))
    return out


_CHECKS = {
    "vllm_version": _version,
    "engine": lambda v: _choice("engine", v, ENGINES),
    "gpu_model": lambda v: _choice("gpu_model", v, (*GPU_MODEL_IDS, CPU_MODEL)),
    "interconnect": lambda v: _choice("interconnect", v, INTERCONNECTS),
    "kv_cache_dtype": lambda v: _choice("kv_cache_dtype", without_remark(v), KV_CACHE_DTYPES),
    "entrypoint": lambda v: _choice("entrypoint", v, ENTRYPOINTS),
    "enforce_eager": lambda v: _switch("enforce_eager", v),
    "quantization": _quantization,
    "extra_flags": _flags,
    "env": _env,
}


def read_field(key: str, value: Any) -> Any:
    """One top-level field of a line in its structured form (a number field as a number), or a
    ``PointError`` naming it; a field the reader does not check is returned as it is."""
    if key in NUMBER_FIELDS or key in LENGTH_FIELDS:
        return _as_number(key, value, length=key in LENGTH_FIELDS)
    if key in _CHECKS and value is not None:
        return _CHECKS[key](value)
    return value


def reads(key: str, value: Any) -> bool:
    """Whether a line's field (``config_facts.KEY`` for a key of ``config_facts``) is in a form
    the reader reads."""
    try:
        if key.startswith("config_facts."):
            _config_facts({key[len("config_facts."):]: value})
        else:
            read_field(key, value)
    except PointError:
        return False
    return True


def narrows(key: str, stated: Any, value: Any) -> bool:
    """Whether ``value`` settles a field the line states only approximately: an exact
    ``vllm_version`` inside the release series of the line's approximate one (``~v0.11.x`` ->
    ``0.11.1``, where other evidence on the line names the release)."""
    if key != "vllm_version" or not reads(key, stated) or not reads(key, value):
        return False
    found, exact = read_version(_version(stated)), read_version(_version(value))
    if not found.approximate or exact.approximate:
        return False
    return release_series(found) == release_series(exact)


def normalized_point(point: dict[str, Any]) -> dict[str, Any]:
    """The line with its numeric fields as numbers and every other field it reads checked
    against its structured form (``PointError`` naming the field otherwise)."""
    if not isinstance(point, dict):
        raise PointError("a kv-points line must be a JSON object")
    out = dict(point)
    for key in (*NUMBER_FIELDS, *LENGTH_FIELDS, *_CHECKS):
        if key in out:
            out[key] = read_field(key, out[key])
    facts = out.get("config_facts")
    if isinstance(facts, dict):
        out["config_facts"] = _config_facts(facts)
    return out


SET_ASIDE_READS_AS = {
    "vllm_version": "not stated: the newest release's rules",
    "engine": "not stated: the release's default engine",
    "gpu_model": "not stated: the device memory is gpu_mem_gib's",
    "interconnect": "not stated: the part's usual link",
    "kv_cache_dtype": "not stated: auto (the model dtype)",
    "entrypoint": "not stated: server",
    "enforce_eager": "not stated: false (vLLM's default)",
    "quantization": "not stated: config_facts' quantization_config, else unquantized",
    "extra_flags": "that entry left out",
    "env": "no environment stated",
    "config_facts.multimodal": "not stated: a vision tower only where config_facts has a vision_config",
    "config_facts.attention_layers": "not stated: the layer kinds the other config keys give",
}
"""What a field set aside by ``readable_point`` reads as (a number field set aside is not stated)."""


def _set_aside(key: str, error: PointError) -> str:
    reads_as = SET_ASIDE_READS_AS.get(key.split("[")[0], "not stated")
    return f"{key} set aside ({error.message}); read as {reads_as}"


def readable_point(point: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The line with every field the reader cannot read set aside, and one note per field set
    aside naming it, why, and what the prediction assumes instead (``SET_ASIDE_READS_AS``).

    ``normalized_point`` refuses such a line; this reads what the line states in structured
    form and treats the rest as unstated, so a line whose free text the reader does not parse
    still gets a prediction, flagged. The text set aside is never interpreted. An ``extra_flags``
    entry is set aside on its own; a line that is not an object, or whose ``config_facts`` is
    not one, is still refused."""
    if not isinstance(point, dict):
        raise PointError("a kv-points line must be a JSON object")
    out, notes = dict(point), []
    flags = out.get("extra_flags")
    if isinstance(flags, list):
        kept = []
        for index, entry in enumerate(flags):
            try:
                _flag_entry(f"extra_flags[{index}]", entry)
                kept.append(entry)
            except PointError as exc:
                notes.append(_set_aside(f"extra_flags[{index}]", exc))
        try:
            _launch("extra_flags", kept)
        except PointError as exc:  # entries that read alone but not together: none is read
            notes.append(_set_aside("extra_flags", exc))
            kept = []
        out["extra_flags"] = kept
    for key in (*NUMBER_FIELDS, *LENGTH_FIELDS, *_CHECKS):
        if key not in out:
            continue
        try:
            out[key] = read_field(key, out[key])
        except PointError as exc:
            notes.append(_set_aside(key, exc))
            del out[key]
    facts = out.get("config_facts")
    if isinstance(facts, dict):
        facts = {k: _config_value(v) for k, v in facts.items()}
        for key in ("multimodal", "attention_layers"):
            if key not in facts:
                continue
            try:
                _config_facts({"num_hidden_layers": facts.get("num_hidden_layers"), key: facts[key]})
            except PointError as exc:
                notes.append(_set_aside(f"config_facts.{key}", exc))
                del facts[key]
        out["config_facts"] = facts
    return normalized_point(out), notes


def _config_value(value: Any) -> Any:
    """A config.json value, with a numeric string read as the number it spells."""
    if isinstance(value, str):
        number = _number(value.strip()) if value.strip() else None
        if number is not None:
            return int(number) if number == int(number) else number
    return value
