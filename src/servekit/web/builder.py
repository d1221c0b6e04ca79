"""The builder's form: which choices are valid, and the selection the default rules make.

Every choice is tried through ``servekit.app.plan.resolve``, the resolution ``servekit plan``
uses: a value is offered when the request with it (and the choices above it) resolves, and the
selection shown is the one that request resolves to. Each hardware choice carries the fit
verdict ``servekit plan`` reaches there (``servekit.app.hardware_fit``). Explicit choices are taken in order
(hardware, variant, strategy, nodes, KV offload, task, then features and modes); one that no
longer fits the choices before it is dropped, with a note, and left to the default rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from servekit.app.discovery import hardware_marks, runs_on
from servekit.app.engine_choice import checked_engine
from servekit.app.hardware_fit import fits_on
from servekit.app.plan import resolve, select
from servekit.app.request import PlanRequest, find_model
from servekit.catalog.documents import CatalogDocuments
from servekit.catalog.domain import Recipe, kv_offload_keys
from servekit.catalog.faults import catalog_faults
from servekit.engines.registry import engine_names
from servekit.errors import ServekitError
from servekit.records import record
from servekit.synthesis.omni import is_omni, known_tasks
from servekit.synthesis.overrides import Overrides
from servekit.synthesis.plan import Selection
from servekit.synthesis.selection import MAX_NODES
from servekit.web.choices import DEFAULT_ENGINE, DIMENSIONS, Choices, with_features
from servekit.web.site import short_names

LABELS = {"hardware": "Hardware", "variant": "Variant", "strategy": "Strategy", "nodes": "Nodes",
          "kv_offload": "KV offload", "task": "Task"}


FIT_MARKS = {True: "fits", False: "doesn't fit", None: ""}


@record
class Option:
    value: str
    label: str
    fits: bool | None = None
    caption: str = ""
    """The choice in full (hardware: its name and id, the fit verdict, the recipe's mark)."""


@record
class Field:
    """One select of the form: its offered values and what "auto" resolves to."""

    name: str
    label: str
    options: tuple[Option, ...]
    chosen: str
    """The explicit value, or "" for auto."""
    auto: str
    """What the default rules choose (shown in the auto option)."""

    @property
    def shown(self) -> str:
        """The label of the value in use (the chosen one, else the default's), in full."""
        value = self.chosen or self.auto
        return next((o.caption or o.label for o in self.options if o.value == value), value)


@record
class FeatureChoice:
    name: str
    description: str
    enabled: bool
    offered: bool
    modes: tuple[Option, ...] = ()
    mode: str = ""
    default_mode: str = ""


@record
class Builder:
    """The resolved form: canonical choices, the selection, the fields and the notes."""

    choices: Choices
    recipe_id: str | None = None
    selection: Selection | None = None
    fields: tuple[Field, ...] = ()
    features: tuple[FeatureChoice, ...] = ()
    notes: tuple[str, ...] = ()
    error: str | None = None
    engines: tuple[str, ...] = ()

    @property
    def overrides(self) -> Overrides:
        """The CLI's overrides the page was given (``servekit plan --tp ... --image ...``)."""
        return choice_overrides(self.choices)

    def request(self, docs: CatalogDocuments) -> PlanRequest:
        """The request ``servekit plan`` gets for the page's canonical choices."""
        c = self.choices
        return PlanRequest(self.recipe_id or c.model, hardware=c.hardware, variant=c.variant, strategy=c.strategy,
                           nodes=c.nodes, features=c.features, no_features=c.no_features, modes=dict(c.modes),
                           kv_offload=c.kv_offload, task=c.task, engine=c.engine, documents=docs)


def choice_overrides(choices: Choices) -> Overrides:
    return Overrides(max_model_len=choices.max_model_len, tp=choices.tp,
                     gpu_memory_utilization=choices.gpu_memory_utilization, image=choices.image,
                     vllm_version=choices.vllm_version)


@dataclass
class _Trial:
    """Resolves requests for one recipe; failures are None."""

    docs: CatalogDocuments
    recipe_id: str
    overrides: Overrides = Overrides()
    cache: dict[Any, Selection | None] = field(default_factory=dict)

    def __call__(self, values: Mapping[str, Any], enable: Sequence[str] = (), disable: Sequence[str] = (),
                 modes: Mapping[str, str] | None = None) -> Selection | None:
        key = (tuple(sorted(values.items())), tuple(enable), tuple(disable), tuple(sorted((modes or {}).items())))
        if key not in self.cache:
            self.cache[key] = self._resolve(values, enable, disable, modes or {})
        return self.cache[key]

    def request(self, values: Mapping[str, Any], enable: Sequence[str] = (), disable: Sequence[str] = (),
                modes: Mapping[str, str] | None = None) -> PlanRequest:
        return PlanRequest(
            self.recipe_id, hardware=values.get("hardware"), variant=values.get("variant"),
            strategy=values.get("strategy"), nodes=values.get("nodes"), features=tuple(enable),
            no_features=tuple(disable), modes=dict(modes or {}), kv_offload=values.get("kv_offload"),
            task=values.get("task"), documents=self.docs, overrides=self.overrides,
        )

    def _resolve(self, values, enable, disable, modes, *, fitted: bool = False) -> Selection | None:
        variant = values.get("variant")
        request = self.request(values, enable, disable, modes)
        choose = select if fitted else resolve
        try:
            with catalog_faults(self.docs.root, self.docs.sources.get(f"models/{self.recipe_id}")):
                return choose(self.docs, request, self.recipe_id, variant)
        except ServekitError:
            return None

    def fitted(self, values: Mapping[str, Any], enable: Sequence[str], disable: Sequence[str],
               modes: Mapping[str, str]) -> Selection | None:
        """The selection ``servekit plan`` makes for these choices: with the smallest layout that
        fits when none is chosen (the trials above use the default rules alone: cheap)."""
        return self._resolve(values, enable, disable, modes, fitted=True)


def _candidates(docs: CatalogDocuments, recipe: dict[str, Any], dimension: str) -> list[str]:
    if dimension == "hardware":
        return list(docs.taxonomy.get("hardware_profiles") or {})
    if dimension == "variant":
        return [str(v) for v in (recipe.get("variants") or {})]
    if dimension == "strategy":
        return list(docs.strategies)
    if dimension == "nodes":
        return [str(n) for n in range(1, MAX_NODES + 1)]
    if dimension == "kv_offload":
        return kv_offload_keys(docs)
    typed = Recipe.of(recipe)
    return [str(t.key) for t in known_tasks(typed)] if is_omni(typed) else []


def _typed(dimension: str, value: str) -> Any:
    return int(value) if dimension == "nodes" else value


def hardware_name(docs: CatalogDocuments, hw: str) -> str:
    """A hardware profile as people read it: ``RTX 5090 (rtx_5090)``."""
    profile = (docs.taxonomy.get("hardware_profiles") or {}).get(hw) or {}
    name = profile.get("display_name") or hw
    return f"{name} ({hw})" if name != hw else hw


def hardware_caption(docs: CatalogDocuments, hw: str, marks: dict[str, str], fits: bool | None) -> str:
    """``RTX 5090 (rtx_5090): fits, verified``: the whole story of one hardware choice."""
    parts = [mark for mark in (FIT_MARKS[fits], marks.get(hw)) if mark]
    return hardware_name(docs, hw) + (f": {', '.join(parts)}" if parts else "")


def _hardware_label(short: str, fits: bool | None) -> str:
    """``RTX 5090: fits``: a select's option, short enough for a phone (the caption has the rest)."""
    return f"{short}: {FIT_MARKS[fits]}" if FIT_MARKS[fits] else short


def _accept_dimensions(trial: _Trial, choices: Choices, notes: list[str]) -> dict[str, Any]:
    accepted: dict[str, Any] = {}
    for dimension in DIMENSIONS:
        value = choices.value(dimension)
        if value is None:
            continue
        if trial({**accepted, dimension: value}) is not None:
            accepted[dimension] = value
        else:
            notes.append(f"{LABELS[dimension].lower()} {value} does not go with the choices before it; "
                         "left to the default")
    return accepted


def _hardware_fits(trial: _Trial, accepted: dict[str, Any], wanted: tuple[list[str], list[str], dict[str, str]],
                   offered: list[str]) -> dict[str, bool | None]:
    """Each offered hardware's fit verdict for the page's other choices (those that resolve there)."""
    others = {k: v for k, v in accepted.items() if k != "hardware"}
    request = trial.request(others, *wanted)
    return fits_on(trial.docs, request, trial.recipe_id, others.get("variant"), offered)


def _field(trial: _Trial, recipe: dict[str, Any], dimension: str, accepted: dict[str, Any],
           final: Selection, wanted: tuple[list[str], list[str], dict[str, str]]) -> Field | None:
    upstream = {k: v for k, v in accepted.items() if DIMENSIONS.index(k) < DIMENSIONS.index(dimension)}
    marks = hardware_marks(recipe)
    values = []
    for value in _candidates(trial.docs, recipe, dimension):
        if dimension == "hardware" and marks and not runs_on(recipe, value) and accepted.get(dimension) != value:
            continue
        if trial({**upstream, dimension: _typed(dimension, value)}) is None:
            continue
        values.append(value)
    fits = _hardware_fits(trial, accepted, wanted, values) if dimension == "hardware" else {}
    short = short_names(trial.docs.taxonomy.get("hardware_profiles") or {}) if dimension == "hardware" else {}
    offered = [Option(v, _hardware_label(short.get(v, v), fits.get(v)), fits.get(v),
                      hardware_caption(trial.docs, v, marks, fits.get(v)))
               if dimension == "hardware" else Option(v, v) for v in values]
    if not offered and dimension in ("kv_offload", "task"):
        return None
    auto = {"hardware": final.hardware, "variant": final.variant, "strategy": final.strategy,
            "nodes": str(final.node_count), "kv_offload": final.kv_offload or "none",
            "task": final.omni_task or ""}[dimension]
    chosen = accepted.get(dimension)
    return Field(dimension, LABELS[dimension], tuple(offered), "" if chosen is None else str(chosen), auto)


def _wanted_features(recipe: dict[str, Any], choices: Choices, defaults: Selection) -> tuple[list[str], list[str]]:
    """(enable, disable) as ``servekit plan`` takes them; a complete set (the form's checkboxes)
    becomes its changes to the defaults, so the arguments come in the CLI's order."""
    names = [str(n) for n in (recipe.get("features") or {})]
    enable = [f for f in choices.features if f in names]
    if choices.complete_features:
        return [f for f in enable if f not in defaults.features], [f for f in defaults.features if f not in enable]
    return enable, [f for f in choices.no_features if f in names and f not in enable]


def _accept_features(trial: _Trial, recipe: dict[str, Any], choices: Choices, values: dict[str, Any],
                     defaults: Selection, notes: list[str]) -> tuple[list[str], list[str], dict[str, str]]:
    enable, disable = _wanted_features(recipe, choices, defaults)
    kept_on: list[str] = []
    for name in enable:
        if trial(values, [*kept_on, name], disable) is not None:
            kept_on.append(name)
        else:
            notes.append(f"feature {name} is not offered with these choices; left off")
    modes: dict[str, str] = {}
    for feature, mode in choices.modes:
        if feature in disable:
            continue
        if trial(values, kept_on, disable, {**modes, feature: mode}) is not None:
            modes[feature] = mode
        else:
            notes.append(f"mode {mode} of {feature} is not offered with these choices; left to the default")
    return kept_on, disable, modes


def _feature_choices(trial: _Trial, recipe: dict[str, Any], values: dict[str, Any], final: Selection,
                     wanted: tuple[list[str], list[str], dict[str, str]]) -> tuple[FeatureChoice, ...]:
    enable, disable, modes = wanted
    out = []
    for name, doc in (recipe.get("features") or {}).items():
        doc = doc if isinstance(doc, dict) else {}
        on = name in final.features
        if on:
            toggled = trial(values, [f for f in enable if f != name], [*disable, name], modes)
        else:
            toggled = trial(values, [*enable, name], [f for f in disable if f != name], modes)
        mode_options: list[Option] = []
        if on:
            for mode in (doc.get("modes") or {}):
                if trial(values, enable, disable, {**modes, name: str(mode)}) is not None:
                    mode_options.append(Option(str(mode), str(mode)))
        out.append(FeatureChoice(
            name=str(name), description=str(doc.get("description") or ""), enabled=on,
            offered=on or toggled is not None, modes=tuple(mode_options), mode=modes.get(name, ""),
            default_mode=str(final.mode_map.get(name) or doc.get("default_mode") or ""),
        ))
    return tuple(out)


def build_form(docs: CatalogDocuments, choices: Choices) -> Builder:
    """Resolve the page's choices: the selection and every field with its valid options."""
    if not choices.model:
        return Builder(choices, notes=choices.problems)
    try:
        _, recipe_id, variant = find_model(PlanRequest(choices.model, documents=docs))
    except ServekitError as exc:
        return Builder(choices, error=str(exc), notes=choices.problems)
    recipe = docs.recipes[recipe_id]
    if choices.variant is None and variant is not None:  # a checkpoint id names its variant
        choices = replace(choices, variant=variant)
    notes = list(choices.problems)
    try:
        checked_engine(choices.engine)
    except ServekitError as exc:
        notes.append(f"{exc}; the engine is left to the default")
        choices = replace(choices, engine=DEFAULT_ENGINE)
    trial = _Trial(docs, recipe_id, choice_overrides(choices))
    values = _accept_dimensions(trial, choices, notes)
    defaults = trial(values)
    if defaults is None:
        return Builder(choices, recipe_id=recipe_id, error=f"{recipe_id} has no plan the default rules can make",
                       notes=tuple(notes))
    wanted = _accept_features(trial, recipe, choices, values, defaults, notes)
    final = trial.fitted(values, *wanted) or trial(values, *wanted) or defaults
    fields = tuple(f for d in DIMENSIONS if (f := _field(trial, recipe, d, values, final, wanted)) is not None)
    canonical = with_features(
        replace(choices, model=recipe_id, **{d: values.get(d) for d in DIMENSIONS}),
        final.features, defaults.features, wanted[2],
    )
    return Builder(canonical, recipe_id, final, fields, _feature_choices(trial, recipe, values, final, wanted),
                   tuple(notes), engines=tuple(engine_names()))
