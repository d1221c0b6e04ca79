"""How a vLLM CPU server's speed moves as it serves: three loads of the engine test's workload
(256:128 at concurrency 4, 40 prompts) back to back on one fresh ``up`` of the calibration model,
the first two after the default warm-up (two rounds of the concurrency), the third after 40 more
warm-up requests. For each load: the slowest TTFT of each wave of four (the three requests
prefilled together in the wave's second step), the median TTFT and TPOT measured against
``servekit bench``'s prediction.

    SERVEKIT_ENGINES_DIR=... python bench/bench_cpu_warmth.py [--write]

It needs the vLLM CPU engine the second set-up command installs (as the other CPU bench scripts).
``--write`` also writes the report to bench/results/cpu-warmth-<date>.txt.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from bench_cpu_interval import WORKLOAD  # noqa: E402
from bench_cpu_overheads import run_cli, up_model, write_stamped  # noqa: E402

from servekit.cli.app import main  # noqa: E402

WARMUPS = (8, 8, 40)
"""Unmeasured requests before each load: the default for concurrency 4, again, then ten waves."""


def _bench(run_id: str, n: int, warmups: int) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["bench", run_id, *WORKLOAD, "--seed", str(200 + n), "--num-warmups", str(warmups),
                     "--format", "json"])
    if code != 0:
        raise SystemExit(f"servekit bench failed ({code})")
    return json.loads(out.getvalue())


def _line(n: int, warmups: int, served: int, doc: dict) -> str:
    requests = json.loads(Path(doc["evidence"]).read_text())["requests"]
    waves = [round(max(r["ttft_ms"] for r in requests[i:i + 4])) for i in range(0, len(requests), 4)]
    ttft, tpot = doc["compared"]["ttft_ms.median"], doc["compared"]["tpot_ms.median"]
    return (f"load {n + 1}: {served} requests served before it, {warmups} warm-up requests; slowest TTFT per wave "
            f"{waves} ms; median TTFT {ttft['measured']:.0f} ms (predicted {ttft['predicted']:.0f}, ratio "
            f"{ttft['ratio']:.2f}); median TPOT {tpot['measured']:.2f} ms (predicted {tpot['predicted']:.2f}, "
            f"ratio {tpot['ratio']:.2f})")


def run() -> str:
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        run_id = up_model(Path(tmp))
        served = 0
        try:
            for n, warmups in enumerate(WARMUPS):
                served += warmups
                lines.append(_line(n, warmups, served - warmups, _bench(run_id, n, warmups)))
                print(lines[-1], flush=True)
                served += 40
        finally:
            with redirect_stdout(io.StringIO()):
                main(["down", run_id])
    return "\n".join(lines)


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="also write bench/results/cpu-warmth-<date>.txt")
    args = parser.parse_args()
    if not os.environ.get("SERVEKIT_ENGINES_DIR"):
        print("note: SERVEKIT_ENGINES_DIR is unset; the engine environment is looked up in servekit's default place")
    text = run()
    if args.write:
        print(f"wrote {write_stamped('cpu-warmth', text + chr(10)).relative_to(REPO)}")


if __name__ == "__main__":
    run_cli(cli)
