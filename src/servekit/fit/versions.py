"""vLLM releases changed how they account memory and report the pool: a launch's version selects
the rules it ran under from the table in ``servekit.fit.release_rules``.

A version text is read in one of three forms, and any other text is refused
(``VersionTextError``), never guessed:

* a release: ``0.19.0``, ``v0.19.0``, ``0.10.1.1``, a post release ``0.8.5.post1``;
* a development build or release candidate, in the PEP 440 form vLLM's builds carry
  (setuptools-scm: ``0.9.1.dev705+g01220ce89`` is 705 commits past the last tag, named for the
  next release): ``0.20.1rc1.dev16+g7a1eb8ac2``, ``0.11.1rc2``. It is ordered as PEP 440 orders
  it: before the release it names, so that release's rules do not apply yet
  (``packaging.version``). An untagged build (``0.1.devN``, setuptools-scm's fallback when no tag
  is found) names no release and is refused;
* an approximate release: ``~0.11.0``, ``~v0.11``, ``0.11.x`` or ``0.11`` (no patch): read as
  written (``0.11`` as ``0.11.0``) and flagged ``approximate`` wherever it is reported.

No version (None) means the newest release, as for a plan.

Besides the version, the engine generation matters: releases before 0.11 still carry the V0
engine, which sizes the pool with its own scheduler defaults (``servekit.fit.scheduler``), its
own sampler and no CUDA graphs in the budget; which engine ran is what the launch states
(``engine``), else the release's default on the launch's platform and ``VLLM_USE_V1``
(``VllmRun``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import field

from packaging.version import InvalidVersion, Version

from servekit.errors import ServekitError
from servekit.fit.release_rules import RULES, VersionRule
from servekit.records import record

__all__ = ["ENGINES", "RULES", "EngineVersion", "VersionRule", "VersionTextError", "VllmRun",
           "overridden_rules", "read_version", "rule", "series_readings", "unsettled_rules"]

ENGINES = ("v0", "v1")
"""The engine generations a launch may state."""
TRITON_SAMPLER_MIN_ROWS = 8
"""Rows from which the Triton top-k/top-p kernel replaces the sort (v0.17.0 apply_top_k_top_p)."""
_RELEASE = re.compile(r"v?\d+(?:\.\d+){2,3}(?:\.post\d+)?", re.IGNORECASE)
_BUILD = re.compile(r"v?\d+(?:\.\d+){2,3}(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[a-z0-9.]+)?",
                    re.IGNORECASE)
_APPROXIMATE = re.compile(r"~\s*v?(\d+\.\d+(?:\.\d+)?)(?:\.x)?|v?(\d+\.\d+)(?:\.x)?", re.IGNORECASE)
_UNTAGGED = re.compile(r"v?0\.1\.dev\d+(?:\+[a-z0-9.]+)?", re.IGNORECASE)
FORMS = "a release (0.19.0), a development build or release candidate (0.20.1rc1.dev16+g7a1eb8ac2) " \
        "or an approximate release (~0.11.0, 0.11.x)"


class VersionTextError(ServekitError):
    """A version text in none of the forms servekit reads."""


@record
class EngineVersion:
    """A version text as read: the release it orders as, and whether it is only approximate."""

    text: str
    version: Version
    approximate: bool = False

    @property
    def form(self) -> str:
        if self.approximate:
            return "approximate"
        return "development build" if self.version.is_prerelease or self.version.local else "release"

    def at_least(self, since: tuple[int, ...]) -> bool:
        return self.version >= Version(".".join(str(n) for n in since) or "0")

    def __str__(self) -> str:
        return f"~{self.version}" if self.approximate else str(self.version)


def read_version(text: str) -> EngineVersion:
    """The release a version text names, in one of the forms of the module text."""
    stripped = str(text).strip()
    approximate = _APPROXIMATE.fullmatch(stripped)
    if approximate:
        return EngineVersion(stripped, Version(approximate.group(1) or approximate.group(2)), approximate=True)
    if _UNTAGGED.fullmatch(stripped):
        raise VersionTextError(
            f"{stripped!r} is an untagged build (setuptools-scm's 0.1.devN): it names no release",
            fix="write the release it was built from, or leave the version out (the newest rules apply)")
    if not (_RELEASE.fullmatch(stripped) or _BUILD.fullmatch(stripped)):
        raise VersionTextError(f"{stripped!r} is not a vLLM version", fix=f"write {FORMS}")
    try:
        return EngineVersion(stripped, Version(stripped))
    except InvalidVersion:
        raise VersionTextError(f"{stripped!r} is not a vLLM version", fix=f"write {FORMS}") from None


def release_series(found: EngineVersion) -> tuple[int, int]:
    """(major, minor) of the release series a version belongs to."""
    major, minor = (list(found.version.release) + [0, 0])[:2]
    return major, minor


def _series(found: EngineVersion) -> tuple[Version, Version]:
    """The release series an approximate version names: from its ``major.minor.0`` up to, not
    including, the next minor release."""
    major, minor = release_series(found)
    return Version(f"{major}.{minor}.0"), Version(f"{major}.{minor + 1}")


def _rule_since(r: VersionRule) -> Version:
    return Version(".".join(str(n) for n in r.since) or "0")


def unsettled_rules(found: EngineVersion) -> tuple[str, ...]:
    """The rules an approximate version leaves open: those that change inside the release series
    it names (``~0.11`` spans 0.11.0 up to 0.12: the sampler changed at 0.11.1), so the reading as
    written is one of several; empty for an exact version."""
    if not found.approximate:
        return ()
    low, high = _series(found)
    out: list[str] = []
    for r in RULES:
        if low < _rule_since(r) < high and r.id not in out:
            out.append(r.id)
    return tuple(out)


def series_readings(found: EngineVersion) -> tuple[str, ...]:
    """The releases an approximate version may be, one per set of rules inside the series it
    names: the version as written, then the first release of each other stretch of the series
    between the releases where an unsettled rule changes (``~0.11``: 0.11.0, 0.11.1; ``~0.11.1``:
    0.11.1, 0.11.0); empty for an exact version and for a series no rule changes inside."""
    if not found.approximate:
        return ()
    low, high = _series(found)
    changes = sorted({since for since in map(_rule_since, RULES) if low < since < high})
    if not changes:
        return ()
    starts = [low, *changes]
    written = max((v for v in starts if v <= found.version), default=low)
    return (str(found.version), *(str(v) for v in starts if v != written))


_RULE_OVERRIDES: ContextVar[dict[tuple[str, tuple[int, ...]], tuple[int, ...] | None]] = ContextVar(
    "release_rule_overrides", default={})


@contextmanager
def overridden_rules(changes: Mapping[tuple[str, tuple[int, ...]], tuple[int, ...] | None]) -> Iterator[None]:
    """Inside the block, the rule entry ``(id, since)`` starts at another release, or (None) is
    left out of the table: how a leave-one-out run refits a release boundary."""
    known = {(r.id, r.since) for r in RULES}
    unknown = set(changes) - known
    if unknown:
        raise KeyError(f"unknown release rule(s): {sorted(unknown)}")
    token = _RULE_OVERRIDES.set({**_RULE_OVERRIDES.get(), **changes})
    try:
        yield
    finally:
        _RULE_OVERRIDES.reset(token)


def _entries(rule_id: str) -> list[tuple[tuple[int, ...], str]]:
    overrides = _RULE_OVERRIDES.get()
    out = []
    for r in RULES:
        if r.id != rule_id:
            continue
        since = overrides[(r.id, r.since)] if (r.id, r.since) in overrides else r.since
        if since is not None:
            out.append((since, r.value))
    return sorted(out)


def rule(rule_id: str, engine_version: str | EngineVersion | None) -> str:
    """The value of one rule for this version: the latest entry whose release is not newer (the
    newest entry when no version is given)."""
    entries = _entries(rule_id)
    if not entries:
        raise KeyError(f"unknown version rule {rule_id!r}")
    if engine_version is None:
        return entries[-1][1]
    found = engine_version if isinstance(engine_version, EngineVersion) else read_version(engine_version)
    return [value for since, value in entries if found.at_least(since)][-1]


@record
class VllmRun:
    """What selects the accounting of one vLLM launch: its version text, its environment
    (``VLLM_USE_V1``, ``VLLM_USE_FLASHINFER_SAMPLER``) and the platform it ran on."""

    version: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    platform: str = "cuda"
    engine: str | None = None
    """``v0`` or ``v1`` when the launch states which engine ran; None: the release's default."""

    def rule(self, rule_id: str) -> str:
        return rule(rule_id, self.version)

    @property
    def v0(self) -> bool:
        """Whether the V0 engine sized the pool: the engine the launch states, else the release's
        default on this platform unless ``VLLM_USE_V1`` says otherwise (before V0 was removed)."""
        default = self.rule("v1_default")
        if default == "only":
            return False
        if self.engine in ENGINES:
            return self.engine == "v0"
        chosen = str(self.env.get("VLLM_USE_V1", "")).strip()
        if chosen in ("0", "1"):
            return chosen == "0"
        return self.platform not in default.split("+")

    @property
    def default_utilization(self) -> float:
        """The share of device memory the engine budgets when the launch sets no
        ``--gpu-memory-utilization`` (0.9, 0.92 from 0.20)."""
        return float(self.rule("default_utilization"))

    @property
    def counts_cudagraphs(self) -> bool:
        """Whether the CUDA-graph memory estimate comes out of the KV budget (V1 from 0.20, on ROCm
        from 0.26), unless ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` says otherwise."""
        if self.v0 or self.rule("cudagraphs_in_budget") != "yes":
            return False
        if self.platform == "rocm" and self.rule("cudagraphs_on_rocm") != "yes":
            return False
        return str(self.env.get("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", "1")).strip() != "0"

    @property
    def reports_concurrency_tokens(self) -> bool:
        """Whether the pool is logged as max_concurrency x max_model_len (V1 from 0.20.1)."""
        return not self.v0 and self.rule("pool_report") == "concurrency"

    @property
    def pools_sliding_apart(self) -> bool:
        """Whether sliding-window layers keep their own KV cache groups (the hybrid allocator)."""
        return not self.v0 and self.rule("hybrid_allocator") == "yes"

    def prefix_caching(self, stated: bool | None, hybrid: bool) -> bool:
        """Whether prefix caching is on: as the launch states it, else the release's default
        (on for attention-only models; for hybrid models from 0.28)."""
        if stated is not None:
            return stated
        return not hybrid or self.rule("hybrid_prefix_caching") == "default"

    def sampler_constant(self, rows: int = 8) -> str:
        """The constant for the dummy sampler pass over ``rows`` sequences: V0's sampler; in V1 the
        release's path, where ``VLLM_USE_FLASHINFER_SAMPLER`` picks FlashInfer (on CUDA) or the sort,
        and the Triton kernel takes only batches of at least 8 rows."""
        if self.v0:
            return "sampler_bytes_per_logit_v0"
        chosen = self.rule("sampler")
        switch = str(self.env.get("VLLM_USE_FLASHINFER_SAMPLER", "")).strip()
        if self.platform == "cuda" and switch in ("0", "1"):
            if switch == "1":
                return "sampler_bytes_per_logit_flashinfer"
            if chosen == "sampler_bytes_per_logit_flashinfer":
                chosen = "sampler_bytes_per_logit_sort"
        if chosen == "sampler_bytes_per_logit_flashinfer" and self.platform != "cuda":
            chosen = "sampler_bytes_per_logit_sort"
        if chosen == "sampler_bytes_per_logit_triton" and rows < TRITON_SAMPLER_MIN_ROWS:
            chosen = "sampler_bytes_per_logit_sort"
        return chosen

    @property
    def non_torch_constant(self) -> str:
        """The constant for one rank's non-torch memory: ROCm's, else the CUDA figure under this
        release's snapshot order."""
        return "non_torch_gib_rocm" if self.platform == "rocm" else self.rule("non_torch")

    def non_torch_constant_for(self, eager: bool) -> str:
        """``non_torch_constant`` for a launch that does (or, ``eager``, does not) capture CUDA
        graphs: from 0.18 the single-rank figure rises by what the graph captures inside the memory
        profile hold outside torch's allocator (the ``cudagraph_profile`` rule), so an eager launch
        there keeps the figure of the same snapshot order without them (0.11's, after setup)."""
        chosen = self.non_torch_constant
        if eager and chosen == "non_torch_gib" and self.rule("cudagraph_profile") == "in_memory_profile":
            return "non_torch_gib_after_setup"
        return chosen

    def tp_comm_constant(self, switched: bool) -> str:
        """The constant for what tensor-parallel collectives add, over NVLink/NVSwitch or xGMI
        (``switched``) or PCIe, as this release's snapshot order counts them."""
        excluded = self.rule("tp_comm") == "setup_excluded"
        if switched:
            return "comm_nvswitch_gib_after_setup" if excluded else "comm_nvswitch_gib"
        return "comm_pcie_gib_after_setup" if excluded else "comm_pcie_gib"

    @property
    def moe_workspace_persists(self) -> bool:
        """Whether the fused-MoE workspace stays allocated through the dummy sampler pass (V1 from 0.14)."""
        return not self.v0 and self.rule("moe_workspace") == "persistent"

    @property
    def moe_chunk_tokens(self) -> int | None:
        """Tokens the fused-MoE caches are sized for at most (one chunk of the pass), None when the
        release sizes them for the whole pass: ``VLLM_FUSED_MOE_CHUNK_SIZE`` when set, else the
        release's default; ``VLLM_ENABLE_FUSED_MOE_ACTIVATION_CHUNKING=0`` turns chunking off where
        the modular kernel runs (the ``moe_chunk`` and ``moe_workspace`` rules)."""
        default = self.rule("moe_chunk")
        if default == "none":
            return None
        if self.moe_workspace_persists and str(self.env.get("VLLM_ENABLE_FUSED_MOE_ACTIVATION_CHUNKING", "")).strip() == "0":
            return None
        stated = str(self.env.get("VLLM_FUSED_MOE_CHUNK_SIZE", "")).strip()
        return int(stated) if stated.isdigit() and int(stated) > 0 else int(default)

    @property
    def counts_runner_buffers(self) -> bool:
        """Whether the model runner's and drafter's persistent buffers count as non-KV memory
        (V1 from 0.27: the profile measures all memory consumed since start-up)."""
        return not self.v0 and self.rule("accounting") == "consumed"


def counts_cudagraphs(engine_version: str | None) -> bool:
    """Whether this vLLM version takes CUDA-graph memory out of the KV budget (on CUDA)."""
    return VllmRun(engine_version).counts_cudagraphs


def reports_concurrency_tokens(engine_version: str | None) -> bool:
    """Whether this vLLM version logs the pool as max_concurrency x max_model_len."""
    return VllmRun(engine_version).reports_concurrency_tokens
