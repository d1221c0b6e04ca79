"""The Python API's entry point: a loaded catalog that answers "how do I run model X on Y".

    >>> import servekit
    >>> catalog = servekit.Catalog.load()                 # the bundled catalog
    >>> plan = catalog.plan("Qwen/Qwen3.8-27B", hardware="h200", enable=["spec_decoding"])
    >>> catalog.render(plan)["command"]
    >>> catalog.fit("Qwen/Qwen3.8-27B", hardware="h100")["fits"]
    >>> catalog.perf("Qwen/Qwen3.8-27B", hardware="h100", concurrency=64)["tpot_ms"]

A thin surface over the planning pipeline (``servekit.app.plan``): loading is
``servekit.catalog.documents``, validation is ``servekit.catalog.validate``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servekit.app.layout import fit_checker, fitted_layout
from servekit.app.plan import synthesized
from servekit.catalog.documents import CatalogDocuments, read_documents, resolve_catalog_dir
from servekit.catalog.faults import catalog_faults
from servekit.synthesis.plan import Plan, Selection
from servekit.synthesis.render import render_plan
from servekit.synthesis.resolve import recipe_doc, resolve_selection


@dataclass
class Catalog:
    """A catalog directory read into memory (plain documents, read once)."""

    documents: CatalogDocuments

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None, *, validate: bool = False) -> Catalog:
        """Read a catalog: ``path``, else ``$SERVEKIT_CATALOG``, else the bundled one.

        With ``validate=True`` the catalog is first checked in full and a ``CatalogError``
        (file, line, key, fix) is raised for its first error.
        """
        root = resolve_catalog_dir(path)
        if validate:  # the validator loads pydantic: only when asked for
            from servekit.catalog.validate import load_checked_catalog

            load_checked_catalog(root)
        return cls(read_documents(root))

    @property
    def root(self) -> Path:
        return self.documents.root

    @property
    def recipes(self) -> list[str]:
        return sorted(self.documents.recipes)

    @property
    def hardware(self) -> list[str]:
        return list((self.documents.taxonomy.get("hardware_profiles") or {}).keys())

    @property
    def strategies(self) -> list[str]:
        return list(self.documents.strategies)

    def recipe(self, recipe_id: str) -> dict[str, Any]:
        """The recipe document as read (plain data)."""
        return recipe_doc(self.documents, recipe_id)

    def select(
        self,
        recipe_id: str,
        *,
        hardware: str | None = None,
        variant: str | None = None,
        strategy: str | None = None,
        nodes: int | None = None,
        features: Iterable[str] | None = None,
        enable: Iterable[str] = (),
        disable: Iterable[str] = (),
        modes: dict[str, str] | None = None,
        kv_offload: str | None = None,
        engine: str = "vllm",
    ) -> Selection:
        """The user's choices with every default rule applied (a ``Selection``); with no
        ``strategy`` and no ``nodes``, the smallest layout that fits when the default one does
        not (``servekit.app.layout``), as ``servekit plan`` picks it."""
        enable, disable = tuple(enable), tuple(disable)

        def at(strategy: str | None, nodes: int | None) -> Selection:
            return resolve_selection(
                self.documents, recipe_id, hardware=hardware, variant=variant, strategy=strategy,
                node_count=nodes, features=features, enable=enable, disable=disable, modes=modes,
                kv_offload=kv_offload, engine=engine,
            )

        selection = at(strategy, nodes)
        if strategy is not None or nodes is not None:
            return selection
        return fitted_layout(self.documents, selection, at, fit_checker(self.documents))

    def plan(self, recipe_id: str, **choices: Any) -> Plan:
        """Choices (as for ``select``) -> a frozen, engine-neutral ``Plan``."""
        with catalog_faults(self.root, self.documents.sources.get(f"models/{recipe_id}")):
            return synthesized(self.documents, self.select(recipe_id, **choices))

    def render(self, plan: Plan) -> dict[str, Any]:
        """A plan in the public recipes API's rendering-object shape."""
        return render_plan(plan)

    def fit(self, model: str, *, hardware: str, **launch: Any) -> dict[str, Any]:
        """Whether ``model`` (a recipe id, checkpoint id or local directory) can start on
        ``hardware``: per-rank memory, the KV pool, the verdict and its fix; the object of
        ``servekit fit MODEL --hardware HW --format json``. ``launch``: the options of
        ``launch_options``."""
        from servekit.app.fit import run_fit

        options = self.launch_options(model, hardware, **launch)
        with catalog_faults(self.root, self.documents.sources.get(f"models/{model}")):
            check, context = run_fit(options)
        return {**context, **check.to_dict()}

    def perf(
        self,
        model: str,
        *,
        hardware: str,
        input_len: int = 1024,
        output_len: int = 1024,
        concurrency: int | None = None,
        request_rate: float | None = None,
        num_prompts: int = 1000,
        max_num_batched_tokens: int | None = None,
        acceptance_rate: float | None = None,
        **launch: Any,
    ) -> dict[str, Any]:
        """The predicted output tokens/s, TTFT and TPOT (median, p99, 80% intervals) and the
        binding term of the launch ``fit`` checks, for requests of ``input_len`` and ``output_len``
        tokens each, ``concurrency`` in flight or a Poisson ``request_rate`` (neither: every prompt
        at once); the object of ``servekit perf MODEL --hardware HW --format json``. ``launch``:
        the options of ``launch_options``."""
        from servekit.app.perf import PerfOptions, request_workload, run_perf

        workload = request_workload(input_len, output_len, concurrency, request_rate, num_prompts)
        options = self.launch_options(model, hardware, **launch)
        with catalog_faults(self.root, self.documents.sources.get(f"models/{model}")):
            return run_perf(PerfOptions(options, workload, max_num_batched_tokens, acceptance_rate))

    def launch_options(
        self,
        model: str,
        hardware: str,
        *,
        variant: str | None = None,
        strategy: str | None = None,
        tp: int | None = None,
        pp: int | None = None,
        max_model_len: str | int | None = None,
        kv_cache_dtype: str | None = None,
        gpu_memory_utilization: float | None = None,
        max_num_seqs: int | None = None,
        engine: str = "vllm",
        nodes: int = 1,
        cpu_kvcache_space_gib: float | None = None,
    ):
        """The launch ``fit`` and ``perf`` check, with the options of ``servekit fit`` (``max_model_len``
        as a number or text such as ``"32k"``) over this catalog."""
        from servekit.app.fit import FitOptions

        return FitOptions(model=model, hardware=hardware, variant=variant, strategy=strategy, tp=tp, pp=pp,
                          max_model_len=None if max_model_len is None else str(max_model_len),
                          kv_cache_dtype=kv_cache_dtype, gpu_memory_utilization=gpu_memory_utilization,
                          max_num_seqs=max_num_seqs, engine=engine, nodes=nodes,
                          cpu_kvcache_space_gib=cpu_kvcache_space_gib, catalog=str(self.root))

    def validate(self) -> list:
        """Every error and warning in this catalog's files, with file, line and key path."""
        from servekit.catalog.validate import validate_catalog

        return validate_catalog(self.root)
