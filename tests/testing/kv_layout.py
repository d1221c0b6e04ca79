"""The KV pool layout servekit.fit gives a kv-points line (the reader's own path from the line to
``servekit.fit.kv.pool_layout``), for tests that pin a layout rule on a synthetic line."""

from __future__ import annotations

from servekit.fit.dtypes import kv_dtype_bytes
from servekit.fit.kv import pool_layout
from servekit.fit.planner import kv_options
from servekit.fit.point_device import point_device
from servekit.fit.point_fields import normalized_point
from servekit.fit.points import facts_from_point, launch_from_point
from servekit.fit.versions import VllmRun


def point_layout(point: dict):
    point = normalized_point(point)
    facts, _ = facts_from_point(point["config_facts"])
    launch = launch_from_point(point)
    device, _, _ = point_device(point, {}, launch.tp)
    run = VllmRun(point.get("vllm_version"))
    return pool_layout(facts, kv_options(facts, launch, device, kv_dtype_bytes(launch.kv_cache_dtype, facts.dtype), run))
