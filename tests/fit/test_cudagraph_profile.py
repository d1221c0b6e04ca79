"""From vLLM 0.18 the CUDA-graph memory profile runs inside the memory profile
(``vllm/v1/worker/gpu_worker.py`` ``determine_available_memory``: ``profile_cudagraph_memory()``
inside ``with memory_profiling(...)``, skipped with ``--enforce-eager`` and on ROCm), so the graphs
it captures raise a rank's non-torch memory; a launch that captures no graph keeps the figure of
the same snapshot order without them (0.11-0.17's, after the distributed setup)."""

from __future__ import annotations

import pytest

from servekit.fit.constants import value
from servekit.fit.hardware import Device
from servekit.fit.launch import LaunchSettings
from servekit.fit.memory import runtime_gib
from servekit.fit.versions import VllmRun
from servekit.hardware import custom_profile


@pytest.mark.parametrize("version,eager,expected", [
    ("0.10.1.1", False, "non_torch_gib"),             # snapshot before the distributed setup
    ("0.10.1.1", True, "non_torch_gib"),              # no graph profile yet: eager changes nothing
    ("0.15.0", False, "non_torch_gib_after_setup"),
    ("0.17.1", True, "non_torch_gib_after_setup"),
    ("0.18.0", False, "non_torch_gib"),               # graphs captured inside the profile
    ("0.18.0", True, "non_torch_gib_after_setup"),    # --enforce-eager: no capture
    ("0.26.1rc1.dev608+g99a10304d", True, "non_torch_gib_after_setup"),
    ("0.18.0rc1", True, "non_torch_gib_after_setup"), # orders before 0.18.0: 0.17's rules
    ("0.18.0rc1", False, "non_torch_gib_after_setup"),
    (None, False, "non_torch_gib"),
    (None, True, "non_torch_gib_after_setup"),
])
def test_the_non_torch_figure_follows_the_graph_profile(version, eager, expected):
    assert VllmRun(version).non_torch_constant_for(eager) == expected


def test_rocm_keeps_its_own_figure_either_way():
    run = VllmRun("0.19.0", platform="rocm")
    assert run.non_torch_constant_for(True) == run.non_torch_constant_for(False) == "non_torch_gib_rocm"


def test_an_eager_launch_budgets_less_runtime_from_0_18():
    device = Device(custom_profile(79.19, 1, brand="NVIDIA", generation="hopper"))
    graphs, eager = LaunchSettings(), LaunchSettings(enforce_eager=True)
    for version in ("0.18.0", "0.19.0"):
        assert runtime_gib(graphs, device, VllmRun(version)) == value("non_torch_gib")
        assert runtime_gib(eager, device, VllmRun(version)) == value("non_torch_gib_after_setup")
    assert runtime_gib(eager, device, VllmRun("0.17.0")) == runtime_gib(graphs, device, VllmRun("0.17.0"))
