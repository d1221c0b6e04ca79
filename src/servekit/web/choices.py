"""What the builder page was asked for: its URL query as typed choices, and back.

The query uses the names of ``servekit plan``'s options: ``model``, ``hardware``, ``variant``,
``strategy``, ``nodes``, ``kv_offload``, ``task``, repeated ``feature`` / ``no_feature``, and
``mode=FEATURE=MODE``, ``engine``, and the overrides under the names of ``servekit plan``'s
options (``tp``, ``max_model_len``, ``gpu_memory_utilization``, ``image``, ``vllm_version``). The
page's form sends its feature checkboxes with ``fs=1``: the checked features are then the whole
set (the unchecked ones are turned off).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field
from urllib.parse import urlencode

from servekit.records import record

MAX_VALUE = 200
MAX_REPEATS = 64
DIMENSIONS = ("hardware", "variant", "strategy", "nodes", "kv_offload", "task")
"""The single-valued choices, in the order each narrows the next."""
OVERRIDES = ("tp", "max_model_len", "gpu_memory_utilization", "image", "vllm_version")
"""The CLI's overrides the page takes (``servekit.synthesis.overrides.Overrides`` fields), as typed."""
DEFAULT_ENGINE = "vllm"


@record
class Choices:
    """The builder's explicit choices; an unset one is left to the catalog's default rules."""

    model: str = ""
    hardware: str | None = None
    variant: str | None = None
    strategy: str | None = None
    nodes: int | None = None
    kv_offload: str | None = None
    task: str | None = None
    features: tuple[str, ...] = ()
    no_features: tuple[str, ...] = ()
    modes: tuple[tuple[str, str], ...] = ()
    complete_features: bool = False
    """``features`` is the whole enabled set (the form's checkboxes)."""
    engine: str = DEFAULT_ENGINE
    tp: int | None = None
    max_model_len: str | None = None
    gpu_memory_utilization: float | None = None
    image: str | None = None
    vllm_version: str | None = None
    problems: tuple[str, ...] = field(default=(), compare=False)
    """Parts of the query that could not be read (shown on the page)."""

    def value(self, dimension: str) -> str | int | None:
        return getattr(self, dimension)


def _text(value: str) -> str | None:
    value = value.strip()
    return value[:MAX_VALUE] if value else None


def _whole(name: str, value: str | None, problems: list[str]) -> int | None:
    if value is None:
        return None
    if value.isdigit() and 0 < int(value) < 1000:
        return int(value)
    problems.append(f"{name} must be a whole number, not {value!r}")
    return None


def _fraction(name: str, value: str | None, problems: list[str]) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if 0 < number <= 1:
        return number
    problems.append(f"{name} must be a number above 0 and at most 1, not {value!r}; left to the recipe")
    return None


def _modes(values: Iterable[str], problems: list[str]) -> tuple[tuple[str, str], ...]:
    out: dict[str, str] = {}
    for value in values:
        feature, sep, mode = value.partition("=")
        if sep and feature.strip() and mode.strip():
            out[feature.strip()] = mode.strip()
        elif value.strip():
            problems.append(f"mode {value!r} is not FEATURE=MODE")
    return tuple(out.items())


def parse_query(items: Iterable[tuple[str, str]]) -> Choices:
    """Choices from query items (repeated keys kept in order); unknown keys are ignored."""
    single: dict[str, str | None] = {}
    many: dict[str, list[str]] = {"feature": [], "no_feature": [], "mode": []}
    for key, raw in items:
        if key in many and len(many[key]) < MAX_REPEATS:
            text = _text(raw)
            if text is not None and text not in many[key]:
                many[key].append(text)
        elif key not in many:
            single[key] = _text(raw)
    problems: list[str] = []
    return Choices(
        model=single.get("model") or "", hardware=single.get("hardware"), variant=single.get("variant"),
        strategy=single.get("strategy"), nodes=_whole("nodes", single.get("nodes"), problems),
        kv_offload=single.get("kv_offload"), task=single.get("task"),
        features=tuple(many["feature"]), no_features=tuple(many["no_feature"]),
        modes=_modes(many["mode"], problems), complete_features=single.get("fs") == "1",
        engine=single.get("engine") or DEFAULT_ENGINE, tp=_whole("tp", single.get("tp"), problems),
        max_model_len=single.get("max_model_len"),
        gpu_memory_utilization=_fraction("gpu_memory_utilization", single.get("gpu_memory_utilization"), problems),
        image=single.get("image"), vllm_version=single.get("vllm_version"),
        problems=tuple(problems),
    )


def query_items(choices: Choices) -> list[tuple[str, str]]:
    """The shortest query that restores ``choices`` (feature lists as changes to the defaults)."""
    items: list[tuple[str, str]] = [("model", choices.model)] if choices.model else []
    for dimension in DIMENSIONS:
        value = choices.value(dimension)
        if value is not None:
            items.append((dimension, str(value)))
    items += [("feature", name) for name in choices.features]
    items += [("no_feature", name) for name in choices.no_features]
    items += [("mode", f"{feature}={mode}") for feature, mode in choices.modes]
    if choices.engine != DEFAULT_ENGINE:
        items.append(("engine", choices.engine))
    items += [(name, str(getattr(choices, name))) for name in OVERRIDES if getattr(choices, name) is not None]
    return items


def query_string(choices: Choices) -> str:
    return urlencode(query_items(choices))


def with_features(choices: Choices, enabled: Iterable[str], defaults: Iterable[str],
                  modes: Mapping[str, str]) -> Choices:
    """``choices`` whose feature lists say, as changes to ``defaults``, that ``enabled`` is on."""
    on, base = list(enabled), list(defaults)
    return Choices(
        model=choices.model, hardware=choices.hardware, variant=choices.variant, strategy=choices.strategy,
        nodes=choices.nodes, kv_offload=choices.kv_offload, task=choices.task,
        features=tuple(f for f in on if f not in base), no_features=tuple(f for f in base if f not in on),
        modes=tuple(modes.items()), engine=choices.engine,
        **{name: getattr(choices, name) for name in OVERRIDES}, problems=choices.problems,
    )
