"""``servekit bench RUN``: a real load against a run ``servekit up`` started, set against the
``servekit perf`` prediction for the same launch and workload, and kept in the evidence ledger.

The prediction is made from the run's record as ``verify`` makes its fit prediction: the plan's
model, engine server argv and hardware profile through ``servekit.fit`` (the KV pool, TP x PP),
then ``servekit.app.perf.launch_of_check`` and ``predicted`` as ``servekit perf`` does it. The
load is ``vllm bench serve`` from the run's engine environment (``servekit.launch.bench_serve``);
its saved result stays in the run's folder (``bench/``) and the comparison goes to
``home()/evidence/`` beside the run's verify records, with the machine's load averages before
and after (a load shares the CPUs with the server; other work on them shows in the figures).
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict
from servekit.records import record
from pathlib import Path
from typing import Any

from servekit.app.perf import CheckedLaunch, launch_of_check, predicted
from servekit.engines.registry import get_engine, native_engine
from servekit.errors import SelectionError, ServekitError
from servekit.hardware import build_profile
from servekit.launch import records
from servekit.launch.bench_serve import bench_argv, run_load, warmups_for
from servekit.launch.environment import engine_env
from servekit.launch.evidence import write_evidence
from servekit.launch.launch_plan import LaunchPlan, plan_from_dict
from servekit.launch.prediction import model_facts, predict
from servekit.perf.compare import all_inside, compare
from servekit.perf.predict import PerfLaunch, Workload
from servekit.processes import exited

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
    record = records.load(run)
    gone = [p for p in record.processes if p.pid is None or exited(p.pid) is not None]
    if record.state != "ready" or gone or not record.processes:
        what = f"{gone[0].role} (process {gone[0].pid}) has exited" if gone else f"its state is {record.state}"
        raise ServekitError(f"run {record.run} is not running: {what}",
                            fix="start one with `servekit up MODEL --detach` (see `servekit ps`)")
    return record


def run_launch(record: records.RunRecord, plan: LaunchPlan) -> tuple[PerfLaunch, dict[str, Any], int]:
    """The speed model's launch of the run, ``servekit perf``'s context keys, and the run's
    max-model-len."""
    raw = record.hardware.get("profile") or {}
    name = str(record.hardware.get("name") or "local")
    facts = model_facts(plan.model)
    fit = predict(plan, raw, name) if facts is not None else None
    report = getattr(fit, "report", None)
    if report is None:
        raise SelectionError(f"run {record.run}: servekit has no facts of {plan.model} to predict its speed from",
                             fix="bench a run of a local model folder or of a checkpoint servekit knows")
    checked = CheckedLaunch(facts, None, report, build_profile(name, raw), record.engine,
                            tuple(plan.engine_server.vllm_argv), record.engine_version)
    launch, found = launch_of_check(checked)
    return launch, {"model": record.model, "checkpoint": plan.model, "hardware": name, **found}, report.max_model_len


def run_prediction(record: records.RunRecord, plan: LaunchPlan, load: Workload) -> dict[str, Any]:
    """``servekit perf``'s JSON for the run's launch and ``load``."""
    launch, context, max_model_len = run_launch(record, plan)
    if load.input_len + load.output_len > max_model_len:
        raise SelectionError(f"--input-len {load.input_len} + --output-len {load.output_len} exceed the run's "
                             f"max-model-len {max_model_len}", fix="shorten the requests")
    return predicted(launch, load, context, f"run {record.run}")


def bench_program(record: records.RunRecord) -> Path:
    """``vllm`` of the run's engine environment (the engine's own; vLLM's forks carry it too)."""
    env = engine_env(get_engine(record.engine))
    program = Path(env.python).parent / native_engine().launch.program[0]
    if not program.exists():
        raise ServekitError(f"run {record.run}: the {record.engine} environment has no {program.name} program "
                            f"for `{TOOL}`", fix=f"bench a run of an engine that ships `{TOOL}`")
    return program


def bench_run(opts: BenchOptions) -> dict[str, Any]:
    """Load the run, compare with the prediction, record the evidence; the evidence document
    (with its path under ``evidence``)."""
    record = running_record(opts.run)
    plan = plan_from_dict(record.plan)
    prediction = run_prediction(record, plan, opts.load)
    program = bench_program(record)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    result = record.folder / "bench" / f"{stamp}.json"
    result.parent.mkdir(parents=True, exist_ok=True)
    warmups = warmups_for(opts.load) if opts.warmups is None else opts.warmups
    argv = bench_argv(program, record.url, record.served_name, plan.model, opts.load, result, opts.seed, warmups)
    hf_env = {k: v for k, v in plan.engine_server.env.items() if k.startswith("HF_")}
    started, load_before = time.time(), list(os.getloadavg())
    measured, _ = run_load(argv, hf_env, result, opts.timeout_s)
    compared = compare(measured.to_dict(), prediction)
    doc = {"kind": "bench", "run": record.run, "plan_hash": record.plan_hash, "engine": record.engine,
           "engine_version": record.engine_version, "hardware": record.hardware, "model": record.model,
           "benched_at": started, "tool": {"name": TOOL, "argv": argv, "result": str(result)},
           "workload": {**asdict(opts.load), "seed": opts.seed, "warmups": warmups},
           "measured": measured.to_dict(), "predicted": prediction, "compared": compared,
           "inside": all_inside(compared), "binding": prediction["binding"],
           "timings": {"bench_seconds": round(time.time() - started, 2)},
           "machine_load": {"before": load_before, "after": list(os.getloadavg())}}
    path = write_evidence(doc)
    return {**doc, "evidence": str(path)}
