"""How close the weight estimate from config.json alone comes to published checkpoint sizes.

``servekit.facts.estimate.estimated_weight_bytes`` prices a checkpoint from its config when no
safetensors headers are at hand (the fit notes it as estimated). This prints, for each config under
bench/data/config-estimates/, the estimate against the published size in ``sizes.json`` (bytes, or a
stated parameter count for a BF16 checkpoint at 2 bytes each), and the median |error|. Norms and
biases are left out of the estimate on purpose; a checkpoint's MTP layers are counted from their
decoder shapes only.

    PYTHONPATH=src python bench/bench_config_estimates.py
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from servekit.facts.config import facts_from_config
from servekit.facts.estimate import estimated_weight_bytes

DATA = Path(__file__).resolve().parent / "data" / "config-estimates"


def rows() -> list[tuple[str, float, float, str]]:
    """(model, estimated bytes, published bytes, source) per config with a published size."""
    sizes = json.loads((DATA / "sizes.json").read_text())
    out = []
    for model, size in sizes.items():
        if model.startswith("_"):
            continue
        config = json.loads((DATA / (model.replace("/", "__") + ".json")).read_text())
        estimate = estimated_weight_bytes(config, facts_from_config(config, model_id=model)).total
        published = float(size["bytes"]) if "bytes" in size else float(size["params_b"]) * 1e9 * 2
        out.append((model, float(estimate), published, size["source"]))
    return out


def main() -> int:
    found = rows()
    print(f"{'model':<46} {'estimate GB':>12} {'published GB':>13} {'error':>8}")
    errors = []
    for model, estimate, published, source in found:
        error = estimate / published - 1
        errors.append(abs(error))
        print(f"{model:<46} {estimate / 1e9:>12.2f} {published / 1e9:>13.2f} {error:>+8.2%}   ({source})")
    print(f"median |error| {statistics.median(errors):.2%} over {len(errors)} checkpoints; worst {max(errors):.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
