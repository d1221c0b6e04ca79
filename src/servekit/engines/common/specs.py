"""What an engine declares as data besides its rules: its pre-compile step, how it is launched,
and the memory model fit applies to it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field

from servekit.records import record

# PrecompileSpec.kind
BOOT = "boot"  # start the server once from the warmed cache, wait until ready, stop it
STEPS = "steps"  # run the precompile steps of the translated launch (EngineLaunch.precompile)
NOTHING = "nothing"  # the engine compiles at its first start on the deployment host

# PrecompileSpec.accelerator
NEEDS_ACCELERATOR = "present"  # runs only where the plan's accelerator is
COMPILES_FOR_TARGET = "or-target"  # runs without it when given a compile target
NO_ACCELERATOR = "not-needed"  # compiles ahead of time without the accelerator


@record
class PrecompileSpec:
    """The step warm-cache runs after the weights are cached, and where it can run.

    ``environment`` is the distribution of the local engine environment the step runs in
    (``servekit engine install``); with ``cpu_environment`` it serves CPU runs only. ``module``
    must import in this interpreter instead (a vendor SDK). ``cpu_options`` are translation
    options for a machine without accelerators. A step's program words resolve in the
    environment's ``bin`` folder, or to this interpreter for ``python``.
    """

    kind: str
    name: str
    planned: str  # what a dry run says would happen
    missing_reason: str  # why it is skipped when what it runs in is not here (NOTHING: why there is none)
    environment: str | None = None
    cpu_environment: bool = False
    module: str | None = None
    accelerator: str = NEEDS_ACCELERATOR
    cpu_options: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 3600.0
    python_override: str | None = None  # env var naming an interpreter to boot with


# LaunchSpec.log_phases: the startup phases a server's log shows, in this order
PHASE_DOWNLOAD = "download"
PHASE_WEIGHTS = "weights loaded"
PHASE_COMPILE = "compile"
PHASE_KV_CACHE = "KV cache allocated"
PHASE_READY = "ready"
PHASES = (PHASE_DOWNLOAD, PHASE_WEIGHTS, PHASE_COMPILE, PHASE_KV_CACHE, PHASE_READY)


@record
class LaunchSpec:
    """How the engine's server is started and watched.

    ``program``: the words in front of the options (``vllm serve``); ``module_program``: the
    same as ``python -m ...`` for an interpreter of the engine's environment, used where the
    environment has no working ``program``. ``readiness_path`` answers 200 once it serves.

    The startup log, as regexes: ``log_phases`` maps a phase (``PHASES``) to the line that shows
    it; ``log_facts`` maps a startup fact (``kv_cache_tokens``, ``max_concurrency``,
    ``weights_gib``, ``load_seconds``, ``compile_seconds``, ``metrics_port``) to the regex whose
    one group holds it; ``log_products`` maps a fact to a regex whose groups multiply to it
    (pages x tokens per page).

    ``metrics_port``: the port ``/metrics`` is served on when not beside the API, and
    ``metrics_port_env`` the variable that moves it. ``kv_space_env``: the variable giving the
    CPU KV pool in GiB (the ``cpu-space`` memory budget).
    """

    program: tuple[str, ...]
    module_program: tuple[str, ...] = ()
    model_option: str | None = None  # how the module form names the model
    readiness_path: str = "/health"
    log_phases: Mapping[str, str] = field(default_factory=dict)
    log_facts: Mapping[str, str] = field(default_factory=dict)
    log_products: Mapping[str, str] = field(default_factory=dict)
    metrics_port: int | None = None
    metrics_port_env: str | None = None
    kv_space_env: str | None = None
    default_port: int = 8000
    """The port the server listens on when its command names none (``--port``)."""


# MemoryRule.budget
BUDGET_UTILIZATION = "utilization"  # utilization x device memory; KV gets what the rank leaves
BUDGET_FREE_FRACTION = "free-fraction"  # utilization of the memory left after weights and overheads
BUDGET_WHOLE_DEVICE = "whole-device"  # all device memory; KV lives beside weights and runtime
BUDGET_CPU_SPACE = "cpu-space"  # a KV space given in GiB, else utilization of node memory less the process
BUDGET_STATIC_FRACTION = "static-fraction"  # weights + KV are a fraction of memory; activations live outside


@record
class MemoryRule:
    """How one engine on one kind of device sizes its KV pool."""

    budget: str
    block_size: int | None = None  # default KV block when the launch sets none (None: the launch's rule)
    mla_block_size: int | None = None  # the same for MLA models
    counts_cuda_graphs: bool = True
    counts_runner_buffers: bool = False  # the runner's persistent buffers count, by vLLM's release rule
    concurrency_in_tokens: bool | None = None  # None: as the engine version reports it
    report_as: str | None = None  # the name reports carry (a device-kind rule of an engine)
    default_utilization: float = 0.9
    release_utilization: bool = False
    profile_run: bool = True
    """The pool is what the budget leaves after a profiling forward pass (its activation peak and
    the runtime's own memory count); False: after loading alone, from the memory then in use (the
    weights), as vLLM on TPU sizes it."""
    """The default utilization is the vLLM release's (``VllmRun.default_utilization``), not
    ``default_utilization``."""
    process_gib: float = 0.0  # resident memory of a worker besides weights (CPU rule)
    pool_requests: int | None = None  # the pool is sized for this many whole requests (None: the budget)
    null_pages: int = 0  # blocks the pool holds besides its requests' (a reserved null block)
    static_fraction: Callable[..., float] | None = field(default=None, compare=False, hash=False)
    """BUDGET_STATIC_FRACTION: the fraction the engine picks when the launch sets none, from
    (device MiB, tp, pp, version, step tokens, speculative method, MLA)."""

    def pool_blocks_cap(self, blocks_per_request: int, max_num_seqs: int | None) -> int | None:
        """The most blocks the pool takes: ``pool_requests`` (or the launch's ``max_num_seqs``)
        requests of ``blocks_per_request`` plus ``null_pages``; None when only the budget bounds it."""
        if self.pool_requests is None:
            return None
        return blocks_per_request * (max_num_seqs or self.pool_requests) + self.null_pages


@record
class MemoryHooks:
    """The memory model fit applies: a rule per device kind, and the KV dtype ``auto`` means."""

    rule: MemoryRule
    cpu_rule: MemoryRule | None = None  # on a CPU device; None: the native engine's CPU rule
    default_kv_dtype: str | None = None  # what ``--kv-cache-dtype auto`` becomes
    tpu_rule: MemoryRule | None = None  # on a TPU; None: ``rule``

    def rule_for(self, device_kind: str) -> MemoryRule | None:
        if device_kind == "cpu":
            return self.cpu_rule
        return self.tpu_rule if device_kind == "tpu" and self.tpu_rule is not None else self.rule
