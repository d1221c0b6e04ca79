"""The scheduler limits SGLang picks when a launch names neither ``--chunked-prefill-size`` nor
``--max-running-requests``, per release and device (GPUs, not disaggregated; read from each
release's ``sglang/srt/server_args.py`` and, from 0.5.19, ``sglang/srt/arg_groups/memory_hook.py``).

Tokens one step prefills (``chunked_prefill_size``), by the memory the GPU reports:

* up to 0.4.7: 2048 under 25,000 MB, else 8192;
* 0.4.8 to 0.5.2: 2048 under 35 GiB, 8192 under 160 GiB, else 16384 (B200, MI300X);
* 0.5.3 to 0.5.19: a 4096 tier between 35 and 60 GiB (A100 40GB, L40S);
* from 0.5.20: 4096 from 20 GiB (the 20-35 GiB parts: RTX 4090 and 5090, A10, L4).

An unknown device memory takes 4096 (every release from 0.4.8), a release not stated the newest
rule.

Running requests: ``min(pool // 2, req_to_token_pool size)``, where the request pool holds
``pool / context_len x 512`` requests clamped to 2048..4096 (``tp_worker.py`` and
``model_runner.py``, the same in every release read, 0.4.8 to 0.5.23; later releases moved it to
``pool_configurator.py``). Without the context length the clamp's ceiling, 4096, stands for it;
without the pool, 4096.

New requests are read between steps, not during them: every ``--scheduler-recv-interval`` turns
of the scheduler's loop (``scheduler_recv_skipper.py``: a decode turn counts 1, a prefill turn
enough to read at once), each turn running ``--num-continuous-decode-steps`` decode steps
(``server_args.py``: "may also increase time-to-first-token latency"). Both default to 1.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

GIB_MIB = 1024
UNKNOWN_MEMORY_TOKENS = 4096
REQUESTS_FLOOR, REQUESTS_CEILING, REQUESTS_PER_CONTEXT = 2048, 4096, 512

TIERS: tuple[tuple[str, tuple[tuple[float, int], ...], int], ...] = (
    ("0.4.8", ((25_000 / 1024, 2048),), 8192),
    ("0.5.3", ((35.0, 2048), (160.0, 8192)), 16384),
    ("0.5.20", ((35.0, 2048), (60.0, 4096), (160.0, 8192)), 16384),
    ("", ((20.0, 2048), (60.0, 4096), (160.0, 8192)), 16384),
)
"""(first release past the rule, (memory under which, tokens) in order, tokens above the last):
each rule holds for the releases before the one it names; the last is the newest rule."""


def release_of(version: str | None) -> Version | None:
    """The SGLang release a version text names (None: not stated or not a release)."""
    try:
        return Version(str(version).strip().lstrip("vV")) if version else None
    except InvalidVersion:
        return None


def at_least(release: Version | None, text: str) -> bool:
    """Whether the rule of release ``text`` applies (a release not stated takes the newest)."""
    return release is None or release >= Version(text)


def chunked_prefill_tokens(memory_gib: float | None, version: str | None = None) -> int:
    """The tokens SGLang ``version`` prefills in one step on a GPU reporting ``memory_gib``."""
    release = release_of(version)
    for before, tiers, top in TIERS:
        if before and at_least(release, before):
            continue
        if not memory_gib:
            return 8192 if before == "0.4.8" else UNKNOWN_MEMORY_TOKENS
        return next((tokens for under, tokens in tiers if memory_gib < under), top)
    raise AssertionError("the last rule has no end")


def max_running_requests(kv_tokens: int | None, context_len: int | None = None) -> int:
    """The requests SGLang runs at once when the launch does not cap them."""
    if not kv_tokens:
        return REQUESTS_CEILING
    pool = (max(REQUESTS_FLOOR, min(REQUESTS_CEILING, int(kv_tokens / context_len * REQUESTS_PER_CONTEXT)))
            if context_len else REQUESTS_CEILING)
    return max(1, min(kv_tokens // 2, pool))


def steps_between_reads(recv_interval: int | None = None, continuous_decode_steps: int | None = None) -> int:
    """Decode steps between two reads of new requests (1: every step, the default)."""
    return max(1, recv_interval or 1) * max(1, continuous_decode_steps or 1)
