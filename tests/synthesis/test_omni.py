"""vLLM-Omni recipes plan one `vllm serve MODEL --omni` per task; batch requests stay plain."""

from __future__ import annotations

import pytest

from servekit.errors import SelectionError
from servekit.synthesis.render import render_plan
from servekit.synthesis.resolve import resolve_selection
from servekit.synthesis.shell import split_command
from servekit.synthesis.synthesize import synthesize

WAN = "Wan-AI/Wan2.2-T2V-A14B-Diffusers"


def test_task_picks_checkpoint_and_omni_flag_comes_last(reference_docs):
    out = render_plan(synthesize(reference_docs, resolve_selection(reference_docs, WAN, omni_task="i2v")))
    assert out["argv"][:3] == ["vllm", "serve", "Wan-AI/Wan2.2-I2V-A14B-Diffusers"] and out["argv"][-1] == "--omni"
    assert split_command(out["command"]) == out["argv"]
    default = resolve_selection(reference_docs, WAN)
    assert default.omni_task == "t2v"


def test_unknown_task_and_non_omni_recipe_are_refused(reference_docs):
    with pytest.raises(SelectionError, match="valid choices: t2v, i2v, ti2v"):
        resolve_selection(reference_docs, WAN, omni_task="t2i")
    with pytest.raises(SelectionError, match="not a vLLM-Omni recipe"):
        resolve_selection(reference_docs, "Qwen/Qwen3.8-27B", omni_task="t2v")
