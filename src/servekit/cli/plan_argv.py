"""A plain ``servekit plan ...`` read without typer, so that a cold plan does not import it.

Typer (with its copy of click, and what they import) costs about as much CPU as the whole plan,
and a plan is the command people and programs run most. ``plain_plan`` reads an argument list
only when every word of it is unambiguous: the ``plan`` command, at most one MODEL, and options
of ``OPTIONS`` written ``--name VALUE`` or ``--name=VALUE`` (flags without a value), each
single-valued one at most once, numbers that Python reads as click does (``int(value)``,
``float(value)``). Anything else (``--help``, ``--``, an unknown or misspelt option, a missing
or malformed value, a second MODEL, shell completion, ``TYPER_ONLY``) returns None, and typer
parses the arguments instead, with its own help and errors. ``OPTIONS`` and ``TYPER_ONLY`` are
the options ``servekit.cli.plan_cmd`` registers with typer; a test compares them, option by option.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any

from servekit.cli.plan_run import PlanOptions
from servekit.synthesis.overrides import Overrides

COMMAND = "plan"
COMPLETION_ENV = "_SERVEKIT_COMPLETE"
"""Set by the shell-completion scripts click writes (``_{PROG}_COMPLETE``): typer answers those."""

STRING, INTEGER, FLOAT, LIST, FLAG = "str", "int", "float", "list", "flag"
OPTIONS: dict[str, tuple[str, str, Any]] = {
    "--hardware": ("hardware", STRING, None),
    "--variant": ("variant", STRING, None),
    "--strategy": ("strategy", STRING, None),
    "--nodes": ("nodes", INTEGER, None),
    "--feature": ("features", LIST, None),
    "--no-feature": ("no_features", LIST, None),
    "--mode": ("modes", LIST, None),
    "--kv-offload": ("kv_offload", STRING, None),
    "--engine": ("engine", STRING, None),
    "--catalog": ("catalog", STRING, None),
    "--format": ("output_format", STRING, None),
    "--batch": ("batch", STRING, None),
    "--task": ("task", STRING, None),
    "--checks": ("checks", FLAG, True),
    "--no-checks": ("checks", FLAG, False),
    "--target": ("target", STRING, None),
    "--qaic-mode": ("qaic_mode", STRING, None),
    "--devices": ("devices", STRING, None),
    "--namespace": ("namespace", STRING, None),
    "--name": ("name", STRING, None),
    "--storage-class": ("storage_class", STRING, None),
    "--cache-size": ("cache_size", STRING, None),
    "--max-model-len": ("max_model_len", STRING, None),
    "--tp": ("tp", INTEGER, None),
    "--pp": ("pp", INTEGER, None),
    "--port": ("port", INTEGER, None),
    "--gpu-memory-utilization": ("gpu_memory_utilization", FLOAT, None),
    "--image": ("image", STRING, None),
    "--vllm-version": ("vllm_version", STRING, None),
    "--docker": ("docker", FLAG, True),
}
"""Option -> (``PlanOptions`` field, or ``Overrides`` field for an override, kind, the value a flag sets)."""
OVERRIDES = tuple(f.name for f in fields(Overrides))
TYPER_ONLY = ("--slo", "--workload")
"""Options of ``servekit plan`` this reader leaves to typer: they run another search or add the
performance prediction (``servekit.cli.plan_cmd``), not the plain plan."""

_CONVERT = {STRING: str, INTEGER: int, FLOAT: float}


class _Unplain(Exception):
    """The arguments need typer: its help, its errors, or a form this reader does not take."""


def plain_plan(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> PlanOptions | None:
    """The ``PlanOptions`` typer would build from ``argv``, or None when typer must read it."""
    if not argv or argv[0] != COMMAND or COMPLETION_ENV in (os.environ if environ is None else environ):
        return None
    try:
        values = _values(list(argv[1:]))
    except _Unplain:
        return None
    overrides = Overrides(**{name: values.pop(name) for name in OVERRIDES if name in values})
    return PlanOptions(**values, overrides=overrides)


def _values(words: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    while words:
        word = words.pop(0)
        if not word.startswith("-"):
            _set(values, "model", word)
            continue
        name, has_value, attached = word.partition("=")
        if name not in OPTIONS:
            raise _Unplain(word)
        field, kind, flag_value = OPTIONS[name]
        if kind == FLAG:
            if has_value:
                raise _Unplain(word)  # click: "Option '--docker' does not take a value."
            _set(values, field, flag_value)
            continue
        if not has_value and not words:
            raise _Unplain(word)  # click: "Option '--hardware' requires an argument."
        value = attached if has_value else words.pop(0)
        if value == "--help":
            raise _Unplain(value)
        if kind == LIST:
            values.setdefault(field, []).append(value)
        else:
            _set(values, field, _convert(_CONVERT[kind], value))
    return values


def _set(values: dict[str, Any], field: str, value: Any) -> None:
    if field in values:
        raise _Unplain(field)  # a second MODEL, or an option given twice: typer says what it makes of it
    values[field] = value


def _convert(kind: type, value: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise _Unplain(value) from None
