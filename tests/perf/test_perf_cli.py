"""``servekit perf MODEL``: the JSON shape, the workload options, and refusals."""

from __future__ import annotations

import json

import pytest

from servekit.cli.app import main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_shape(capsys):
    code, out, _ = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--input-len", "1024",
                        "--output-len", "1024", "--concurrency", "64", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["tp"] == 2 and doc["devices"] == 2 and doc["batch"] == 64
    assert doc["output_throughput_per_device_tok_s"] * 2 == pytest.approx(doc["output_throughput_tok_s"], abs=0.01)
    for key in ("ttft_ms", "tpot_ms"):
        assert doc[key]["median"] <= doc[key]["p99"]
        for stat in ("median", "p99"):
            lo, hi = doc["interval80"][key][stat]
            assert lo <= doc[key][stat] <= hi
    lo, hi = doc["interval80"]["output_throughput_tok_s"]
    assert lo <= doc["output_throughput_tok_s"] <= hi
    assert doc["binding"] in {"weight bandwidth", "KV bandwidth", "compute", "communication", "engine overhead",
                              "scheduler limit", "KV pool", "client concurrency"}
    assert set(doc["terms_ms"]) == {"weights", "kv", "compute", "communication", "overhead"}


def test_request_rate_and_text(capsys):
    code, out, _ = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--request-rate", "1")
    assert code == 0 and "output throughput" in out and "binding:" in out and "TPOT median" in out


def test_fp8_variant_on_h200_is_faster_per_device_than_bf16(capsys):
    docs = []
    for variant in ("default", "fp8"):
        code, out, _ = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "h200", "--variant", variant, "--tp", "1",
                            "--concurrency", "1", "--format", "json")
        assert code == 0
        docs.append(json.loads(out))
    assert docs[1]["weights_format"] == "fp8"
    assert docs[1]["tpot_ms"]["median"] < docs[0]["tpot_ms"]["median"]


def test_refusals(capsys):
    code, _, err = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "h100", "--concurrency", "4",
                        "--request-rate", "2")
    assert code != 0 and "--concurrency" in err and "Traceback" not in err
    code, _, err = _run(capsys, "perf", "Qwen/Qwen3.8-27B", "--hardware", "xeon6")
    assert code != 0 and "Traceback" not in err
    code, _, err = _run(capsys, "perf", "Qwen/Qwen3.8-27B")
    assert code != 0 and "--hardware" in err
