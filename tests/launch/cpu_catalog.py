"""A catalog for a one-server CPU plan: the bundled catalog plus a recipe serving a model directory
the test made on the bundled ``xeon6`` profile (x86 CPU backend), eager (``--enforce-eager``: no
torch.compile, so no C++ compiler is needed where it runs and start-up is short) with a 1 GiB
KV pool."""

from __future__ import annotations

import shutil
from pathlib import Path

from launch.pd_catalog import BUNDLED, recipe_text

RECIPE_ID = "servekit-test/tiny-cpu"
HARDWARE = "xeon6"


def cpu_catalog(root: Path, model: Path, max_model_len: int = 1024, kv_space: int = 1) -> Path:
    """``root``: the bundled catalog with one recipe serving ``model`` on a CPU profile."""
    shutil.copytree(BUNDLED, root)
    recipe = root / "models" / f"{RECIPE_ID}.yaml"
    recipe.parent.mkdir(parents=True)
    text = recipe_text(RECIPE_ID, model, HARDWARE, "single_node_tp", max_model_len, kv_space, ["--enforce-eager"])
    recipe.write_text(text, encoding="utf-8")
    return root
