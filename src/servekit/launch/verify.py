"""``verify``: probe a running server, read its startup facts, set them beside the prediction,
and leave an evidence record.

A target is a recorded run (its URL, served name, engine, plan and log are known) or a bare
URL (probes only: served name from ``/v1/models``, no log, no prediction). A run with a router
is probed through the router's URL; ``/metrics`` and the startup facts are its (first) engine
server's, which the fit prediction is about.
"""

from __future__ import annotations

import time
from dataclasses import field
from pathlib import Path
from typing import Any

import httpx

from servekit.engines.common.engine import Engine
from servekit.engines.registry import get_engine, native_engine
from servekit.launch import probes as p
from servekit.launch.evidence import write_evidence
from servekit.launch.launch_plan import ENGINE, plan_from_dict
from servekit.launch.metrics import metrics_url_of, probe_metrics
from servekit.launch.prediction import predict, predicted_figures
from servekit.processes import exited
from servekit.launch.records import ProcessRecord, RunRecord
from servekit.launch.startup_facts import read_facts
from servekit.launch.up import log_tail
from servekit.records import record

COMPARED = ("kv_tokens", "max_concurrency")


@record
class VerifyResult:
    ok: bool
    run: str | None
    url: str
    probes: tuple[p.Probe, ...]
    measured: dict[str, Any] = field(default_factory=dict)
    predicted: dict[str, Any] = field(default_factory=dict)
    log_tail: str = ""
    evidence: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "run": self.run, "url": self.url, "probes": [x.to_dict() for x in self.probes],
                "measured": self.measured, "predicted": self.predicted,
                "compared": compare(self.measured, self.predicted), "evidence": self.evidence,
                **({"log_tail": self.log_tail} if not self.ok else {})}


def compare(measured: dict[str, Any], predicted: dict[str, Any]) -> dict[str, Any]:
    return {k: {"measured": measured.get(k), "predicted": predicted.get(k),
                "equal": measured.get(k) == predicted.get(k)}
            for k in COMPARED if k in measured or k in predicted}


def option_value(argv: tuple[str, ...] | list[str], option: str) -> str | None:
    for i, word in enumerate(argv):
        if word == option and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(option + "="):
            return word.split("=", 1)[1]
    return None


def feature_probes(target: p.Target, features: tuple[str, ...], argv: tuple[str, ...]) -> list[p.Probe]:
    out = []
    if "tool_calling" in features:
        out.append(p.probe_tools(target, option_value(argv, "--tool-call-parser")))
    if "reasoning" in features:
        out.append(p.probe_reasoning(target, option_value(argv, "--reasoning-parser")))
    if "structured_output" in features or "structured_outputs" in features:
        out.append(p.probe_structured(target))
    return out


def processes_probe(run_record: RunRecord) -> p.Probe:
    gone = [x for x in run_record.processes if x.pid and exited(x.pid) is not None]
    if gone:
        return p.Probe("processes", False, f"{gone[0].role} (process {gone[0].pid}) of the run is not running")
    return p.Probe("processes", True, f"{len(run_record.processes)} process(es) running: "
                                      + ", ".join(x.role for x in run_record.processes))


def engine_records(run_record: RunRecord) -> list[ProcessRecord]:
    """The run's engine servers (all its processes for a record without kinds)."""
    return [x for x in run_record.processes if x.kind == ENGINE] or list(run_record.processes)


def served_name_at(url: str) -> str:
    try:
        data = httpx.get(f"{url}/v1/models", timeout=30).json().get("data") or [{}]
        return str(data[0].get("id") or "")
    except (httpx.HTTPError, ValueError, AttributeError):
        return ""


def run_probes(target: p.Target, features: tuple[str, ...], argv: tuple[str, ...]) -> tuple[list[p.Probe], dict]:
    found = [p.probe_health(target), p.probe_models(target), p.probe_chat(target), p.probe_stream(target)]
    found += feature_probes(target, features, argv)
    metrics, values = probe_metrics(target)
    return [*found, metrics], values


def _measured(run_record: RunRecord, engine: Engine, samples: dict) -> dict[str, Any]:
    first = engine_records(run_record)[:1]
    text = "\n".join(Path(x.log).read_text(encoding="utf-8", errors="replace") for x in first if Path(x.log).is_file())
    measured = read_facts(text, engine)
    if "ready_seconds" in run_record.times:
        measured["ready_seconds"] = run_record.times["ready_seconds"]
    measured["phases"] = dict(run_record.phases)
    measured["metrics_samples"] = len(samples)
    return measured


def verify_run(run_record: RunRecord, timeout: float = 120.0) -> VerifyResult:
    engine = get_engine(run_record.engine)
    plan = plan_from_dict(run_record.plan)
    server = engine_records(run_record)[0]
    metrics_url = metrics_url_of(server.url or run_record.url, engine,
                                 log_tail(run_record, lines=100_000, role=server.role))
    if metrics_url is None and server.url and server.url != run_record.url:
        metrics_url = f"{server.url}/metrics"
    target = p.Target(run_record.url, run_record.served_name, engine.launch.readiness_path, timeout, metrics_url)
    started = time.monotonic()
    found, samples = run_probes(target, plan.features, plan.engine_server.vllm_argv)
    found.append(processes_probe(run_record))
    fit = predict(plan, run_record.hardware.get("profile") or {}, run_record.hardware.get("name", "local"))
    result = VerifyResult(all(x.ok for x in found), run_record.run, run_record.url, tuple(found),
                          _measured(run_record, engine, samples), predicted_figures(fit), "")
    doc = {**result.to_dict(), "plan_hash": run_record.plan_hash, "engine": run_record.engine,
           "engine_version": run_record.engine_version, "hardware": run_record.hardware, "model": run_record.model,
           "verified_at": time.time(), "timings": {"verify_seconds": round(time.monotonic() - started, 2),
                                                   **run_record.times}}
    tail = "" if result.ok else log_tail(run_record)
    path = write_evidence({**doc, "log_tail": tail})
    return VerifyResult(result.ok, result.run, result.url, result.probes, result.measured, result.predicted,
                        tail, str(path))


def verify_url(url: str, timeout: float = 120.0) -> VerifyResult:
    url = url.rstrip("/")
    target = p.Target(url, served_name_at(url), native_engine().launch.readiness_path, timeout)
    found, samples = run_probes(target, (), ())
    result = VerifyResult(all(x.ok for x in found), None, url, tuple(found), {"metrics_samples": len(samples)})
    path = write_evidence({**result.to_dict(), "verified_at": time.time(), "hardware": {"name": "unknown"}})
    return VerifyResult(result.ok, None, url, result.probes, result.measured, {}, "", str(path))
