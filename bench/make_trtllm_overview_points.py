"""Writes bench/data/trtllm-perf-overview-v1.0.jsonl: the rows of TensorRT-LLM's published
throughput table (docs/source/performance/perf-overview.md at commit 00f3768, the page marked
'NEW for v1.0'; trtllm-bench throughput, PyTorch backend, every request of one input/output
length, the request counts of the page's table) as perf-points lines: the speed model's second
calibration source, with input/output shapes the visible file does not hold (long prompts, long
outputs).

Only models whose config.json facts the visible perf-points file already carries are written
(their ``config_facts`` are read from it), and no run that file already holds; the figures are
the page's "Total Output Throughput". Half the lines are calibration points
(``servekit.perf.constants.TABLE_CALIBRATION``), the other half evaluation points, which
``bench/bench_perf_points.py`` scores apart.

Usage: python bench/make_trtllm_overview_points.py [VISIBLE.jsonl]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from servekit.atomic import write_bytes_atomic  # noqa: E402

VISIBLE = REPO.parent / "shared" / "reference" / "perf-points-visible.jsonl"
OUT = REPO / "bench" / "data" / "trtllm-perf-overview-v1.0.jsonl"
SOURCE = ("github:NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md @ "
          "00f37686aa854010d68bcbd0f4ab000221541ca6 (Throughput Measurements tables)")

SHAPES = ("128/128", "128/2048", "128/4096", "500/2000", "1000/1000", "1000/2000", "2048/128", "2048/2048",
          "5000/500", "20000/2000")
REQUESTS = {"128/128": 30000, "128/2048": 3000, "128/4096": 1500, "1000/2000": 1500, "2048/128": 3000,
            "2048/2048": 1500, "5000/500": 1500, "1000/1000": 3000, "500/2000": 3000, "20000/2000": 1000}
"""The page's $num_requests per input/output length."""

# (model, precision, gpu, tp, pp, figures in SHAPES order; None where the page has no figure)
TABLE: tuple[tuple[str, str, str, int, int, tuple[int | None, ...]], ...] = (
    ("nvidia/Llama-3.1-8B-Instruct-FP8", "fp8", "h200", 1, 1,
     (27911, 26221, 18027, 20770, 17744, 16828, 3538, 12194, 3902, 1804)),
    ("nvidia/Llama-3.1-8B-Instruct-FP8", "fp8", "h100", 1, 1,
     (28312, 22714, 14325, 17660, 15220, 13899, 3450, 9305, 3459, 1351)),
    ("nvidia/Llama-3.3-70B-Instruct-FP4", "nvfp4", "b200", 1, 1,
     (11147, 9922, 6831, 7762, 7007, 6271, 1339, 4783, 1459, 665)),
    ("nvidia/Llama-3.3-70B-Instruct-FP8", "fp8", "h200", 1, 1,
     (3803, 4336, 2872, 3666, 2909, 2994, 442, 2003, 566, 283)),
    ("nvidia/Llama-3.3-70B-Instruct-FP8", "fp8", "h100", 2, 1,
     (6378, 6651, 4199, 5222, 4205, 4146, 762, 3082, 898, 437)),
    ("nvidia/Llama-3.3-70B-Instruct-FP4", "nvfp4", "rtx_pro_6000", 1, 1,
     (3264, 2422, 1349, 1856, 1787, 1594, 393, 1074, 401, 142)),
    ("nvidia/Llama-3.3-70B-Instruct-FP4", "nvfp4", "rtx_pro_6000", 1, 2,
     (6172, 4993, 2893, 4114, 3707, 2993, 813, 2336, 812, 319)),
    ("nvidia/Llama-3.3-70B-Instruct-FP4", "nvfp4", "rtx_pro_6000", 1, 4,
     (9641, 7922, 4978, 6939, 5961, 5274, 1511, 3870, 1511, 630)),
    ("nvidia/Llama-3.3-70B-Instruct-FP4", "nvfp4", "rtx_pro_6000", 1, 8,
     (11881, 9833, 7352, 9435, 8166, 6943, 2495, 6078, 2491, 1148)),
    ("nvidia/Llama-3.1-405B-Instruct-FP4", "nvfp4", "b200", 4, 1,
     (6281, 8020, 6345, 6244, 5209, 4933, 749, 4212, 1048, 672)),
    ("nvidia/Llama-3.1-405B-Instruct-FP8", "fp8", "h200", 8, 1,
     (3814, 5348, 4741, 4724, 3330, 3722, 456, 2948, 650, 505)),
    ("nvidia/Llama-3.1-405B-Instruct-FP8", "fp8", "h100", 8, 1,
     (3627, 4340, 3116, 3994, 2919, 2895, 453, 2296, 610, 345)),
)

CONFIG_OF = {"nvidia/Llama-3.3-70B-Instruct-FP4": "nvidia/Llama-3.3-70B-Instruct-FP8",
             "nvidia/Llama-3.1-405B-Instruct-FP4": "nvidia/Llama-3.1-405B-Instruct-FP8"}
"""A quantized export has its base model's config.json facts."""


def read_points(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def config_facts(points: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for point in points:
        out.setdefault(point["model"], point["config_facts"])
    return out


def run_key(point: dict) -> tuple:
    wl = point["workload"]
    return (point["model"], point["gpu"], point["tp"], point["pp"], wl["input_len"], wl["output_len"])


def lines(points: list[dict]) -> list[dict]:
    """The table's rows, less those the visible file already holds (the same run)."""
    facts = config_facts(points)
    held = {run_key(p) for p in points if p.get("engine") == "trtllm"}
    out = []
    for model, precision, gpu, tp, pp, figures in TABLE:
        for shape, figure in zip(SHAPES, figures, strict=True):
            isl, osl = (int(x) for x in shape.split("/"))
            if figure is None or (model, gpu, tp, pp, isl, osl) in held:
                continue
            out.append({
                "id": f"trtllm-overview-{model.split('/')[-1]}-{gpu}-tp{tp}pp{pp}-{isl}-{osl}",
                "engine": "trtllm", "engine_version": "1.0", "model": model,
                "config_facts": facts[CONFIG_OF.get(model, model)], "weights_precision": precision,
                "kv_cache_dtype": None, "gpu": gpu, "gpu_count": tp * pp, "nodes": 1, "tp": tp, "pp": pp,
                "dp": 1, "ep": None, "max_num_seqs": None, "max_num_batched_tokens": None, "spec_decoding": None,
                "workload": {"input_len": isl, "output_len": osl, "concurrency": None, "request_rate": None,
                             "offline": True, "num_prompts": REQUESTS[shape]},
                "measured": {"output_throughput_tok_s": float(figure), "ttft_ms": None, "ttft_stat": None,
                             "tpot_ms": None, "tpot_stat": None},
                "source": SOURCE, "source_group": "trtllm-overview", "confidence": "high",
            })
    return out


def write_from_visible(argv: list[str], make: Callable[[list[dict]], list[dict]], out: Path) -> int:
    """``make``'s lines from the visible perf-points file (``argv[0]``, else ``VISIBLE``), written to ``out``."""
    visible = Path(argv[0]) if argv else VISIBLE
    if not visible.is_file():
        print(f"{visible}: not found (the visible perf-points file gives the models' config facts)", file=sys.stderr)
        return 2
    rows = make(read_points(visible))
    write_bytes_atomic(out, "".join(json.dumps(r) + "\n" for r in rows).encode())
    print(f"{out.relative_to(REPO)}: {len(rows)} lines")
    return 0


def main(argv: list[str]) -> int:
    return write_from_visible(argv, lines, OUT)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
