"""GPU names in kv-points: memory, platform and links of the part a name names (servekit.fit.gpu_models)."""

from __future__ import annotations

import pytest

from servekit.fit.gpu_models import interconnect_from_name, memory_from_name
from servekit.hardware import DEVICE_MEMORY
from servekit.fit.point_device import point_device
from servekit.fit.points import predict_point


@pytest.mark.parametrize("name,gib", [
    ("NVIDIA H100 80GB HBM3", 79.19),
    ("NVIDIA H200", 139.8),
    ("NVIDIA A100-SXM4-40GB", 39.39),
    ("NVIDIA A100 80GB PCIe", 79.15),
    ("NVIDIA L40S", 44.42),
    ("NVIDIA A10 (24 GB)", 22.06),
    ("NVIDIA GeForce RTX 3090", 23.58),
    ("AMD Instinct MI300X", 191.98),
    ("NVIDIA H100 NVL 94GB", round(94 * 31.4 / 32, 2)),    # a size in the name
    ("NVIDIA GeForce RTX 4090", round(24 * 31.4 / 32, 2)),  # the taxonomy's part
    ("AMD Instinct MI325X", round(256 * 191.98 / 192, 2)),  # Instinct parts expose their nominal memory
    ("NVIDIA H100 NVL", None),                              # a variant whose memory the taxonomy does not hold
    ("unknown Ampere GPU", None),
])
def test_memory_of_a_named_part(name, gib):
    assert memory_from_name(name) == gib


def test_every_measured_part_names_its_source():
    assert all(m.source and m.memory_gib > 0 for m in DEVICE_MEMORY)


@pytest.mark.parametrize("name,link", [
    ("NVIDIA H100 80GB HBM3", "nvlink"), ("NVIDIA A100-SXM4-40GB", "nvlink"), ("NVIDIA A100 80GB PCIe", "pcie"),
    ("NVIDIA L40S (AWS g6e, PCIe, no NVLink)", "pcie"), ("NVIDIA GeForce RTX 5090", "pcie"),
    ("AMD Instinct MI300X", "xgmi"), ("NVIDIA B200", "nvlink"),
])
def test_links_of_a_node_of_named_parts(name, link):
    assert interconnect_from_name(name) == link


def test_amd_parts_run_rocm():
    device, engine, _ = point_device({"gpu": "AMD Instinct MI300X", "gpu_mem_gib": 191.98}, {}, 2)
    assert (device.profile.platform, device.brand, engine) == ("rocm", "AMD", "vllm")
    device, _, _ = point_device({"gpu": "NVIDIA L40S"}, {}, 1)
    assert device.profile.platform == "cuda" and device.memory_gib == 44.42


def test_a_gpu_named_without_its_memory_still_gets_a_prediction():
    point = {"config_facts": {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                              "head_dim": 128, "hidden_size": 4096, "vocab_size": 128256},
             "gpu": "NVIDIA L40S", "tp": 1, "gpu_memory_utilization": 0.9, "max_model_len": 8192,
             "weights_gib": 14.99, "vllm_version": "0.19.0"}
    named = predict_point(point, use_logged_memory=False)
    stated = predict_point({**point, "gpu_mem_gib": 44.42}, use_logged_memory=False)
    assert named["kv_tokens"] == stated["kv_tokens"] > 0
    assert predict_point({**point, "gpu": "some GPU"}, use_logged_memory=False)["kv_tokens"] is None
