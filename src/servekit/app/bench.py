"""``servekit bench RUN``: a real load against a run ``servekit up`` started, set against the
``servekit perf`` prediction for the same launch and workload, and kept in the evidence ledger.

The prediction is made from the run's record as ``verify`` makes its fit prediction: the plan's
model, engine server argv and hardware profile through ``servekit.fit`` (the KV pool, TP x PP),
then ``servekit.app.perf.launch_of_check`` and ``predicted`` as ``servekit perf`` does it. The
load is ``vllm bench serve`` from the run's engine environment (``servekit.launch.bench_serve``);
its saved result stays in the run's folder (``bench/``) and the comparison goes to
``home()/evidence/`` beside the run's verify records, with the machine's load averages before
and after (a load shares the CPUs with the server; other work on them shows in the figures).

On this machine's CPU (hardware ``local``, ``servekit.perf.local_cpu``) the CPU is measured again
just before the load, with the server idle, and the prediction uses those figures (kept in the
evidence under ``cpu_speed``): other work on the CPUs slows the server's steps, and the figures
of the moment carry it. It is measured once more after the load (``cpu_speed_after``, and each
figure's ratio to the first in ``cpu_speed_change``): a shared machine's speed moves over minutes,
and a comparison made while it moved says so. Each request's start, TTFT and latency go to the
evidence too (``requests``, ``servekit.launch.bench_serve.per_request``): which requests made a
tail percentile; for a closed loop, ``waves`` sets its slowest wave against the median one (a
load of waves has the p99 TTFT of its slowest, ``wave_spread``). The load's requests have fixed lengths (the random dataset with no
length spread, ``--ignore-eos``), so the prediction is that of ``Workload.fixed_lengths``.

The speed model prefills every prompt token. The server's prefix-cache counters, read before and
after the load (its warm-ups included), say how many prompt tokens it found cached instead
(``prefix_cache`` in the evidence); a share above nothing shortens the measured TTFT by what the
prediction does not know.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from servekit.app.perf import CheckedLaunch, launch_of_check, predicted
from servekit.engines.registry import get_engine, native_engine
from servekit.errors import SelectionError, ServekitError
from servekit.hardware import build_profile
from servekit.launch import records
from servekit.launch.bench_serve import bench_argv, per_request, run_load, warmups_for, wave_spread
from servekit.launch.environment import engine_env
from servekit.launch.evidence import write_evidence
from servekit.launch.launch_plan import LaunchPlan, plan_from_dict
from servekit.launch.metrics import prefix_cache_use, probe_metrics
from servekit.launch.prediction import model_facts, predict
from servekit.launch.probes import Target
from servekit.perf.compare import all_inside, compare
from servekit.perf.launch import measured_cpu
from servekit.perf.local_cpu import cpu_speed, speed_change
from servekit.perf.predict import PerfLaunch, Workload
from servekit.processes import exited
from servekit.records import record

TOOL = "vllm bench serve"


@record
class BenchOptions:
    run: str
    load: Workload
    seed: int = 0
    timeout_s: float = 1800.0
    warmups: int | None = None
    """Unmeasured requests first (None: ``servekit.launch.bench_serve.warmups_for``)."""


def running_record(run: str) -> records.RunRecord:
    """The record of ``run`` when every process of it runs; an error with the fix otherwise."""
    run_record = records.load(run)
    gone = [p for p in run_record.processes if p.pid is None or exited(p.pid) is not None]
    if run_record.state != "ready" or gone or not run_record.processes:
        what = f"{gone[0].role} (process {gone[0].pid}) has exited" if gone else f"its state is {run_record.state}"
        raise ServekitError(f"run {run_record.run} is not running: {what}",
                            fix="start one with `servekit up MODEL --detach` (see `servekit ps`)")
    return run_record


def run_launch(run_record: records.RunRecord, plan: LaunchPlan) -> tuple[PerfLaunch, dict[str, Any], int]:
    """The speed model's launch of the run, ``servekit perf``'s context keys, and the run's
    max-model-len."""
    raw = run_record.hardware.get("profile") or {}
    name = str(run_record.hardware.get("name") or "local")
    facts = model_facts(plan.model)
    fit = predict(plan, raw, name) if facts is not None else None
    report = getattr(fit, "report", None)
    if report is None:
        raise SelectionError(f"run {run_record.run}: servekit has no facts of {plan.model} to predict its speed from",
                             fix="bench a run of a local model folder or of a checkpoint servekit knows")
    checked = CheckedLaunch(facts, None, report, build_profile(name, raw), run_record.engine,
                            tuple(plan.engine_server.vllm_argv), run_record.engine_version)
    launch, found = launch_of_check(checked)
    return launch, {"model": run_record.model, "checkpoint": plan.model, "hardware": name, **found}, \
        report.max_model_len


def run_prediction(run_record: records.RunRecord, plan: LaunchPlan, load: Workload) -> dict[str, Any]:
    """``servekit perf``'s JSON for the run's launch and ``load``."""
    launch, context, max_model_len = run_launch(run_record, plan)
    if load.input_len + load.output_len > max_model_len:
        raise SelectionError(f"--input-len {load.input_len} + --output-len {load.output_len} exceed the run's "
                             f"max-model-len {max_model_len}", fix="shorten the requests")
    return predicted(launch, load, context, f"run {run_record.run}")


def bench_program(run_record: records.RunRecord) -> Path:
    """``vllm`` of the run's engine environment (the engine's own; vLLM's forks carry it too)."""
    env = engine_env(get_engine(run_record.engine))
    program = Path(env.python).parent / native_engine().launch.program[0]
    if not program.exists():
        raise ServekitError(f"run {run_record.run}: the {run_record.engine} environment has no {program.name} program "
                            f"for `{TOOL}`", fix=f"bench a run of an engine that ships `{TOOL}`")
    return program


def measure_cpu_now(run_record: records.RunRecord) -> dict[str, Any] | None:
    """This machine's CPU measured now when the run's speed row is it (None otherwise)."""
    name = str(run_record.hardware.get("name") or "local")
    profile = build_profile(name, run_record.hardware.get("profile") or {})
    return cpu_speed(profile.display_name, fresh=True) if measured_cpu(profile) else None


def server_metrics(run_record: records.RunRecord) -> dict[str, float]:
    """The run's ``/metrics`` samples now (empty when it serves none)."""
    probe, values = probe_metrics(Target(str(run_record.url), run_record.served_name))
    return values if probe.ok else {}


def bench_run(opts: BenchOptions) -> dict[str, Any]:
    """Load the run, compare with the prediction, record the evidence; the evidence document
    (with its path under ``evidence``)."""
    run_record = running_record(opts.run)
    plan = plan_from_dict(run_record.plan)
    speed = measure_cpu_now(run_record)
    load = replace(opts.load, fixed_lengths=True)
    prediction = run_prediction(run_record, plan, load)
    program = bench_program(run_record)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    result = run_record.folder / "bench" / f"{stamp}.json"
    result.parent.mkdir(parents=True, exist_ok=True)
    warmups = warmups_for(load) if opts.warmups is None else opts.warmups
    argv = bench_argv(program, run_record.url, run_record.served_name, plan.model, load, result, opts.seed,
                      warmups)
    hf_env = {k: v for k, v in plan.engine_server.env.items() if k.startswith("HF_")}
    started, load_before, counters = time.time(), list(os.getloadavg()), server_metrics(run_record)
    measured, raw = run_load(argv, hf_env, result, opts.timeout_s)
    cache = prefix_cache_use(counters, server_metrics(run_record))
    finished, load_after = time.time(), list(os.getloadavg())
    after = measure_cpu_now(run_record) if speed is not None else None
    compared = compare(measured.to_dict(), prediction)
    doc = {"kind": "bench", "run": run_record.run, "plan_hash": run_record.plan_hash, "engine": run_record.engine,
           "engine_version": run_record.engine_version, "hardware": run_record.hardware, "model": run_record.model,
           "benched_at": started, "tool": {"name": TOOL, "argv": argv, "result": str(result)},
           "workload": {**asdict(load), "seed": opts.seed, "warmups": warmups},
           "measured": measured.to_dict(), "predicted": prediction, "compared": compared,
           "inside": all_inside(compared), "binding": prediction["binding"],
           "timings": {"bench_seconds": round(finished - started, 2)},
           "machine_load": {"before": load_before, "after": load_after}}
    if speed is not None:
        doc["cpu_speed"] = speed
    if after is not None:
        doc["cpu_speed_after"] = after
        doc["cpu_speed_change"] = speed_change(speed, after)
    if cache is not None:
        doc["prefix_cache"] = cache
    requests = per_request(raw)
    if requests is not None:
        doc["requests"] = requests
        spread = wave_spread(requests) if load.concurrency is not None and load.request_rate is None else None
        if spread is not None:
            doc["waves"] = spread
    path = write_evidence(doc)
    return {**doc, "evidence": str(path)}
