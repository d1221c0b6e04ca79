"""The device of a kv-points line: its ``gpu_model`` id of the device table gives the memory,
vendor, generation and link (servekit.fit.gpu_models, servekit.fit.point_device); the ``gpu``
text is never read."""

from __future__ import annotations

import pytest

from servekit.fit.gpu_models import GPU_PARTS, gpu_part
from servekit.fit.point_device import point_device
from servekit.fit.point_fields import PointError
from servekit.fit.points import predict_point
from servekit.hardware import DEVICE_MEMORY

POINT = {"config_facts": {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                          "head_dim": 128, "hidden_size": 4096, "vocab_size": 128256},
         "tp": 1, "gpu_memory_utilization": 0.9, "max_model_len": 8192, "weights_gib": 14.99,
         "vllm_version": "0.19.0"}


def test_every_device_table_id_has_one_part_row():
    gpus = [m for m in DEVICE_MEMORY if m.brand in ("NVIDIA", "AMD")]  # the TPU rows are chips, not GPU parts
    assert len(gpus) < len(DEVICE_MEMORY) and all(gpu_part(m.id) is not None for m in gpus)
    assert {p.id for p in GPU_PARTS} <= {m.id for m in DEVICE_MEMORY}
    assert all(p.source and p.brand in ("NVIDIA", "AMD") and p.interconnect in ("nvlink", "pcie", "xgmi")
               for p in GPU_PARTS)


@pytest.mark.parametrize("model,gib,link,generation,platform", [
    ("h100", 79.19, "nvlink", "hopper", "cuda"), ("h200", 139.8, "nvlink", "hopper", "cuda"),
    ("a100_40gb", 39.39, "nvlink", "ampere", "cuda"), ("l40s", 44.42, "pcie", "ada", "cuda"),
    ("a10", 22.06, "pcie", "ampere", "cuda"), ("rtx_3090", 23.58, "pcie", "ampere", "cuda"),
    ("l4", 22.03, "pcie", "ada", "cuda"), ("l40", 44.40, "pcie", "ada", "cuda"),
    ("rtx_5090", 31.4, "pcie", "blackwell", "cuda"), ("mi300x", 191.98, "xgmi", "", "rocm"),
    # measured rows of parts whose vendor, generation and link come from the speed table
    ("b200", 178.35, "nvlink", "blackwell", "cuda"), ("a30", 23.5, "pcie", "ampere", "cuda"),
    ("rtx_4090", 23.64, "pcie", "ada", "cuda"),
])
def test_a_device_id_gives_memory_link_generation_and_platform(model, gib, link, generation, platform):
    device, engine, _ = point_device({"gpu_model": model}, {}, 2)
    profile = device.profile
    assert (device.memory_gib, profile.interconnect, device.generation, profile.platform, engine) == (
        gib, link, generation, platform, "vllm")
    assert gpu_part(model).generation == generation


def test_stated_memory_and_link_win_over_the_parts_usual_ones():
    device, _, _ = point_device({"gpu_model": "h100", "gpu_mem_gib": 79.18, "interconnect": "pcie"}, {}, 2)
    assert device.memory_gib == 79.18 and device.profile.interconnect == "pcie"


def test_a_line_without_a_device_id_is_a_gpu_of_its_stated_memory_only():
    device, engine, _ = point_device({"gpu_mem_gib": 80.0}, {}, 1)
    assert (device.memory_gib, device.generation, device.profile.interconnect, engine) == (80.0, "", "pcie", "vllm")
    assert point_device({}, {}, 1)[0].memory_gib == 0.0


def test_cpu_backend_by_id_or_by_its_kv_space():
    assert point_device({"gpu_model": "cpu"}, {}, 1)[1] == "vllm-cpu"
    assert point_device({}, {"VLLM_CPU_KVCACHE_SPACE": "8"}, 1)[1:] == ("vllm-cpu", 8.0)


def test_a_device_named_by_id_without_its_memory_still_gets_a_prediction():
    named = predict_point({**POINT, "gpu_model": "l40s"}, use_logged_memory=False)
    stated = predict_point({**POINT, "gpu_mem_gib": 44.42}, use_logged_memory=False)
    assert named["kv_tokens"] == stated["kv_tokens"] > 0
    assert predict_point({**POINT, "gpu": "NVIDIA L40S"}, use_logged_memory=False)["kv_tokens"] is None


@pytest.mark.parametrize("field,bad", [("gpu_model", "NVIDIA L40S"), ("gpu_model", "a10g"), ("gpu_model", "ironwood"),
                                       ("interconnect", "NVLink 4")])
def test_a_device_field_in_free_text_is_refused_by_name(field, bad):
    with pytest.raises(PointError, match=field):
        predict_point({**POINT, field: bad})


@pytest.mark.parametrize("model,nominal,link,generation,platform", [
    ("gb200", 186, "nvlink", "blackwell", "cuda"), ("h100_pcie", 80, "pcie", "hopper", "cuda"),
    ("a40", 48, "pcie", "ampere", "cuda"), ("t4", 16, "pcie", "turing", "cuda"), ("v100", 32, "nvlink", "volta", "cuda"),
    ("mi325x", 256, "xgmi", "", "rocm"),
])
def test_a_gpu_known_by_its_datasheet_size_is_an_id_too(model, nominal, link, generation, platform):
    """A GPU of the speed table without a measured memory row: its vendor, generation and link are
    the speed table's; its memory is the datasheet size at the assumed share, and the prediction
    says it rests on that assumption; a stated gpu_mem_gib wins and leaves nothing assumed."""
    from servekit.fit.gpu_models import GPU_MODEL_IDS
    from servekit.hardware.device_memory import assumed_gib, nominal_row

    assert model in GPU_MODEL_IDS and gpu_part(model).generation == generation
    device, _, _ = point_device({"gpu_model": model}, {}, 2)
    ecc = nominal_row(model).ecc  # a40 and t4: data-centre GDDR6 with ECC on
    assert device.memory_gib == assumed_gib(nominal, platform == "rocm", ecc) and device.generation == generation
    assert (device.profile.interconnect, device.profile.platform) == (link, platform)
    assert device.profile.memory_source.startswith("assumed")
    named = predict_point({**POINT, "gpu_model": model}, use_logged_memory=False)
    assert named["kv_tokens"] is not None and any("assumed" in note for note in named["assumed"])
    stated = predict_point({**POINT, "gpu_model": model, "gpu_mem_gib": nominal * 0.9}, use_logged_memory=False)
    assert "assumed" not in stated and stated["available_kv_gib"] < named["available_kv_gib"]


def test_the_link_of_a_named_part_sets_the_collectives_memory():
    """Two ranks of an NVLink part hold more non-torch memory than two PCIe cards of the same size
    (servekit.fit constants comm_nvswitch_gib and comm_pcie_gib): naming the part moves the pool."""
    line = {**POINT, "tp": 2, "gpu_mem_gib": 79.0}
    nvlink = predict_point({**line, "gpu_model": "h800"}, use_logged_memory=False)
    pcie = predict_point({**line, "gpu_model": "h100_pcie"}, use_logged_memory=False)
    assert nvlink["available_kv_gib"] < pcie["available_kv_gib"]
