"""The server's ``/metrics`` page, parsed with prometheus-client."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from servekit.engines.common.engine import Engine
from servekit.launch.probes import Probe, Target
from servekit.launch.startup_facts import read_facts


def parse_metrics(text: str) -> dict[str, float]:
    """Every unlabelled-or-first sample's value by sample name (``vllm:num_requests_running`` ...)."""
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values.setdefault(sample.name, sample.value)
    return values


PREFIX_CACHE_QUERIES = "vllm:prefix_cache_queries_total"
PREFIX_CACHE_HITS = "vllm:prefix_cache_hits_total"
"""vLLM V1's prefix-cache counters, in prompt tokens looked up and found cached
(``vllm/v1/metrics/loggers.py``: ``vllm:prefix_cache_queries`` and ``vllm:prefix_cache_hits``)."""


def prefix_cache_use(before: dict[str, float], after: dict[str, float]) -> dict[str, float] | None:
    """The prompt tokens looked up in the prefix cache between two readings of ``/metrics``, those
    found there, and their share (None when the server does not count them)."""
    if PREFIX_CACHE_QUERIES not in after or PREFIX_CACHE_HITS not in after:
        return None
    queried = after[PREFIX_CACHE_QUERIES] - before.get(PREFIX_CACHE_QUERIES, 0.0)
    hits = after[PREFIX_CACHE_HITS] - before.get(PREFIX_CACHE_HITS, 0.0)
    return {"queried_tokens": queried, "hit_tokens": hits, "hit_rate": round(hits / queried, 4) if queried > 0 else 0.0}


def metrics_url_of(url: str, engine: Engine, log_text: str) -> str | None:
    """Where ``engine`` serves ``/metrics`` when it has a port of its own: the port its log names
    (``metrics_port`` fact), else the one it declares; None when it serves them beside the API."""
    port = read_facts(log_text, engine).get("metrics_port") or engine.launch.metrics_port
    if port is None:
        return None
    return f"{url.rsplit(':', 1)[0]}:{int(port)}/metrics"


def probe_metrics(target: Target) -> tuple[Probe, dict[str, float]]:
    try:
        response = httpx.get(target.metrics_url or f"{target.url}/metrics", timeout=30)
    except httpx.HTTPError as exc:
        return Probe("metrics", False, f"{type(exc).__name__}: {exc}"), {}
    if response.status_code != 200:
        return Probe("metrics", False, f"GET /metrics -> HTTP {response.status_code}"), {}
    try:
        values = parse_metrics(response.text)
    except ValueError as exc:
        return Probe("metrics", False, f"/metrics is not Prometheus text: {exc}"), {}
    return Probe("metrics", bool(values), f"{len(values)} samples parsed"), values
