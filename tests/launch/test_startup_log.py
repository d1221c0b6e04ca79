"""Startup phases and facts read from a server's log, and the readiness wait over a fake server."""

from __future__ import annotations

import sys
import time

from servekit.engines.registry import get_engine, native_engine
from servekit.launch.phases import COMPILE, KV_CACHE, READY, WEIGHTS, engine_phases, matcher
from servekit.launch.readiness import wait_ready
from servekit.launch.spawn import start_process
from servekit.launch.startup_facts import read_facts
from servekit.processes import stop_processes

VLLM_CPU_LOG = """\
(Worker pid=1) INFO [default_loader.py:501] Loading weights took 0.01 seconds
(Worker pid=1) INFO [cpu_model_runner.py:87] Warming up model for the compilation...
(Worker pid=1) INFO [weight_utils.py:1108] Filesystem type for checkpoints: EXT4. Checkpoint size: 0.00 GiB.
(EngineCore pid=2) INFO [kv_cache_utils.py:2327] CPU KV cache size: 1,048,576 tokens, Maximum concurrency for 1,024 tokens per request: 1024.00x
(EngineCore pid=2) INFO [core.py:402] init engine (profile, create kv cache, warmup model) took 54.90 s
(APIServer pid=3) INFO [entry.py:140] Starting vLLM server on http://127.0.0.1:18431
"""


def test_the_phases_of_a_vllm_cpu_log_in_order():
    assert engine_phases(native_engine()).seen(VLLM_CPU_LOG) == [WEIGHTS, COMPILE, KV_CACHE, READY]


def test_the_facts_of_a_vllm_cpu_log():
    facts = read_facts(VLLM_CPU_LOG, native_engine())
    assert facts["kv_tokens"] == 1048576
    assert facts["max_concurrency"] == 1024.0
    assert facts["load_seconds"] == 0.01
    assert facts["weights_gib"] == 0.0
    assert facts["engine_init_seconds"] == 54.9


def test_a_log_without_facts_gives_none():
    assert read_facts("nothing here\n", native_engine()) == {}


SERVER = """
import http.server, sys, time
print("Loading weights took 0.5 seconds", flush=True)
time.sleep(0.3)
print("CPU KV cache size: 4,096 tokens", flush=True)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def test_wait_ready_reports_the_phases_and_ends_when_healthy(tmp_path):
    from servekit.processes import free_port

    port = free_port()
    log = tmp_path / "serve.log"
    pid = start_process([sys.executable, "-c", SERVER, str(port)], {}, log)
    seen = []
    try:
        ready = wait_ready(f"http://127.0.0.1:{port}/health", [pid], [log], engine_phases(native_engine()), 60,
                           lambda name, s: seen.append(name), interval=0.1)
    finally:
        stop_processes([pid], [pid])
    assert ready.ok, ready.reason
    assert seen[-1] == READY and WEIGHTS in seen and KV_CACHE in seen


def test_wait_ready_fails_when_the_process_exits(tmp_path):
    log = tmp_path / "serve.log"
    pid = start_process([sys.executable, "-c", "print('boom'); raise SystemExit(3)"], {}, log)
    started = time.monotonic()
    ready = wait_ready("http://127.0.0.1:9/health", [pid], [log], engine_phases(native_engine()), 60, interval=0.1)
    assert not ready.ok and "exited with code 3" in ready.reason
    assert time.monotonic() - started < 30


MAX_CPU_LOG = """\
02:33:03.259 INFO: Building, compiling, and initializing model...
02:33:03.294 INFO: Building model graph took 0.0 seconds
02:34:03.273 INFO: Still compiling model (60.0s elapsed)
02:36:17.275 INFO: Compiling model took 191.9 seconds
02:36:17.276 INFO: Jenga KV manager: 5 huge pages x 256.00 KiB = 1.25 MiB (per device), page_size 128 tokens
Starting ASGI metrics server on port 8001
02:38:06.801 INFO: max_batch_size: 1
        \N{ROCKET} Server ready on http://127.0.0.1:48573 (Press CTRL+C to quit)
"""


def test_the_phases_and_facts_of_a_max_cpu_log():
    max_engine = get_engine("max")
    assert engine_phases(max_engine).seen(MAX_CPU_LOG) == [WEIGHTS, COMPILE, KV_CACHE, READY]
    facts = read_facts(MAX_CPU_LOG, max_engine)
    assert facts["kv_tokens"] == 5 * 128
    assert facts["compile_seconds"] == 191.9
    assert facts["metrics_port"] == 8001 and facts["max_batch_size"] == 1


def test_engines_read_only_their_own_lines():
    assert read_facts(MAX_CPU_LOG, native_engine()) == {}
    assert engine_phases(native_engine()).seen(MAX_CPU_LOG) == []
    assert read_facts(VLLM_CPU_LOG, None) == {}


def test_a_phase_map_keeps_startup_order():
    phases = matcher({READY: "r", WEIGHTS: "w", "custom": "c"})
    assert phases.seen("r w c") == [WEIGHTS, READY, "custom"]
