"""Hardware profiles: every derived fact, the bundled taxonomy's stated facts, and a catalog
that states none of servekit's own keys (the reference catalog) deriving the same answers."""

from __future__ import annotations

import dataclasses

import pytest

from servekit.catalog.documents import bundled_catalog_dir, read_documents
from servekit.catalog.schema.taxonomy import SERVEKIT_PROFILE_KEYS
from servekit.hardware import assumed_gib, build_profile, custom_profile, profile_of, profiles_for
from servekit.hardware.precision import (
    fp8_kv_cache,
    matches_constraint,
    needs_native_precision,
    precision_gap,
    variant_precision_supported,
)
from servekit.hardware.profile import (
    derive_compute_target,
    derive_interconnect,
    derive_kind,
    derive_platform,
    device_model_names,
    usable_gib,
)

KIND = {
    "h100": "gpu", "b200": "gpu", "rtx_4090_2x": "gpu", "mi300x": "gpu", "arc_pro_b60": "gpu",
    "trillium": "tpu", "ironwood": "tpu", "xeon6": "cpu", "ascend_950pr": "npu",
    "ai100_standard": "accelerator", "ai100_ultra": "accelerator",
}
PLATFORM = {"h200": "cuda", "mi355x": "rocm", "arc_pro_b70": "xpu", "xeon5": "cpu", "trillium": "tpu",
            "ascend_950pr": "ascend", "ai100_ultra": "qaic"}
TARGET = {
    "h100": "cuda:sm_90", "h200": "cuda:sm_90", "b200": "cuda:sm_100", "gb200": "cuda:sm_100",
    "b300": "cuda:sm_103", "gb300": "cuda:sm_103", "dgx_station_gb300": "cuda:sm_103",
    "dgx_spark_gb10": "cuda:sm_121", "rtx_pro_6000_8x": "cuda:sm_120", "rtx_5090_2x": "cuda:sm_120",
    "rtx_4090_2x": "cuda:sm_89", "mi300x": "hip:gfx942", "mi325x": "hip:gfx942", "mi355x": "hip:gfx950",
    "xeon6": None, "trillium": None, "arc_pro_b60": None, "ascend_950pr": None, "ai100_standard": None,
}
MEMORY = {  # hw: (nominal GB per device, GiB the engine sees per device, devices); None: assumed (assumed_gib)
    "h100": (80, 79.19, 8), "h200": (141, 139.8, 8), "b200": (180, 178.35, 8), "gb200": (192, None, 4),
    "rtx_5090": (32, 31.4, 1), "mi355x": (288, None, 8), "xeon6": (256, None, 4), "ai100_standard": (16, None, 8),
}
BLACKWELL_FORMATS = {"fp8", "nvfp4", "fp4", "mxfp4"}
PRECISIONS = {
    "h100": {"fp8"}, "rtx_4090_2x": {"fp8"}, "b200": BLACKWELL_FORMATS, "rtx_5090": BLACKWELL_FORMATS,
    "mi300x": {"fp8"}, "mi355x": {"fp8", "mxfp4"}, "ai100_ultra": set(),
    "xeon6": None, "trillium": None, "arc_pro_b60": None, "ascend_950pr": None,
}


@pytest.fixture(scope="module")
def bundled():
    return profiles_for(read_documents(bundled_catalog_dir(), only_recipes=[]).taxonomy)


@pytest.fixture(scope="module")
def reference(reference_catalog):
    return profiles_for(read_documents(reference_catalog, only_recipes=[]).taxonomy)


def _stripped(raw):
    return {k: v for k, v in raw.items() if k not in SERVEKIT_PROFILE_KEYS}


# ── the bundled taxonomy ────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("hw", "kind"), KIND.items())
def test_kind(bundled, hw, kind):
    assert bundled[hw].kind == kind


@pytest.mark.parametrize(("hw", "platform"), PLATFORM.items())
def test_platform(bundled, hw, platform):
    assert bundled[hw].platform == platform


@pytest.mark.parametrize(("hw", "target"), TARGET.items())
def test_compute_target(bundled, hw, target):
    assert bundled[hw].compute_target == target


@pytest.mark.parametrize(("hw", "memory"), MEMORY.items())
def test_memory_per_device(bundled, hw, memory):
    nominal, usable, devices = memory
    profile = bundled[hw]
    assert profile.memory_gb == pytest.approx(nominal)
    if usable is None:
        assert profile.memory_source.startswith("assumed: ")
        assert profile.memory_gib == assumed_gib(nominal, profile.brand == "AMD")
    else:
        assert profile.memory_source.startswith("measured: ") and profile.memory_gib == pytest.approx(usable)
    assert profile.devices == devices


@pytest.mark.parametrize(("hw", "formats"), PRECISIONS.items())
def test_precisions(bundled, hw, formats):
    assert bundled[hw].precisions == (None if formats is None else frozenset(formats))


def test_nvl4_is_gb200_and_gb300_only(bundled):
    assert {hw for hw, p in bundled.items() if p.nvl4} == {"gb200", "gb300"}


def test_every_stated_fact_equals_its_derivation(bundled):
    """The bundled taxonomy writes down what a catalog without servekit's keys derives."""
    for hw, profile in bundled.items():
        derived = build_profile(hw, _stripped(profile.raw))
        for field in dataclasses.fields(profile):
            if field.name in ("raw", "interconnect"):
                continue
            assert getattr(derived, field.name) == getattr(profile, field.name), (hw, field.name)
        assert derived.nvl4 == profile.nvl4, hw


def test_qaic_soc_layout(bundled):
    ultra = bundled["ai100_ultra"].socs
    assert (ultra.soc_count, ultra.socs_per_card, ultra.nsp_cores_per_soc, ultra.memory_gb_per_soc) == (8, 4, 16, 32)
    assert bundled["h100"].socs is None
    assert bundled["ai100_standard"].container.argv[:2] == ("--device", "/dev/accel/accel0")


def test_container_devices(bundled):
    assert bundled["h200"].container.argv == ("--gpus", "all")
    assert bundled["mi300x"].container.argv[:2] == ("--device=/dev/kfd", "--device=/dev/dri")
    assert bundled["arc_pro_b60"].container.argv[:2] == ("--device", "/dev/dri")
    ascend = bundled["ascend_950pr"].container
    assert ascend.host_network and "/dev/davinci0" in ascend.argv and "/dev/davinci1" not in ascend.argv
    tpu = bundled["trillium"].container
    assert tpu.security == ("--privileged",) and tpu.host_network and tpu.shared_memory == ("-v", "/dev/shm:/dev/shm")
    cpu = bundled["xeon6"].container
    assert cpu.argv == () and cpu.shared_memory == ("--shm-size", "16g") and "--privileged" not in cpu.security
    assert all(p.container.source for p in bundled.values())


def test_image_keys(bundled):
    keys = {hw: p.image_key for hw, p in bundled.items()}
    assert (keys["h100"], keys["mi300x"], keys["xeon6"], keys["arc_pro_b60"], keys["trillium"],
            keys["ascend_950pr"], keys["ai100_ultra"]) == ("nvidia", "amd", "intel", "intel", "tpu", "npu", "qaic")


# ── a catalog without servekit's keys ─────────────────────────────────────────────────


def test_reference_catalog_states_none_of_servekits_keys(reference):
    for hw, profile in reference.items():
        assert not set(profile.raw) & set(SERVEKIT_PROFILE_KEYS), hw


def test_reference_catalog_derives_the_bundled_facts(bundled, reference):
    for hw, profile in reference.items():
        ours = bundled[hw]
        for name in ("kind", "platform", "compute_target", "precisions", "memory_gib", "devices", "nvl4",
                     "container", "image_key", "restricted", "scalable"):
            assert getattr(profile, name) == getattr(ours, name), (hw, name)


# ── derivations, one by one ────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("brand", "generation", "platform"), [
    ("NVIDIA", "hopper", "cuda"), ("AMD", "amd", "rocm"), ("Google", "tpu", "tpu"), ("Intel", "cpu", "cpu"),
    ("Intel", "xpu", "xpu"), ("Intel", "", "cpu"), ("Huawei", "npu", "ascend"), ("Huawei", "", "ascend"),
    ("Qualcomm", "qaic", "qaic"), ("Qualcomm", "", "qaic"), ("", "", "cuda"),
])
def test_platform_from_generation_and_brand(brand, generation, platform):
    gens = (generation,) if generation else ()
    assert derive_platform({}, brand, gens) == platform
    assert derive_platform({"platform": "rocm"}, brand, gens) == "rocm"


def test_an_entry_with_nsp_cores_is_cloud_ai():
    assert derive_platform({"nsp_cores_per_soc": 16}, "", ()) == "qaic"


def test_kind_from_platform():
    assert [derive_kind({}, p) for p in ("cuda", "rocm", "xpu", "cpu", "tpu", "ascend", "qaic")] == [
        "gpu", "gpu", "gpu", "cpu", "tpu", "npu", "accelerator"]
    assert derive_kind({"kind": "npu"}, "cuda") == "npu"
    assert derive_kind({"kind": "bogus"}, "cuda") == "gpu"


def test_compute_target_from_model_then_generation():
    assert device_model_names("rtx_pro_6000_8x", {"display_name": "RTX Pro 6000 8x"}) == (
        "rtx_pro_6000", "rtx_pro_6000_8x")
    assert derive_compute_target({}, "rtx_5090_2x", "cuda", ("blackwell",)) == "cuda:sm_120"
    assert derive_compute_target({}, "some_hopper", "cuda", ("hopper",)) == "cuda:sm_90"
    assert derive_compute_target({}, "a100", "cuda", ("ampere",)) == "cuda:sm_80"
    assert derive_compute_target({}, "mystery", "cuda", ("blackwell",)) is None
    assert derive_compute_target({"display_name": "MI300X"}, "", "rocm", ("amd",)) == "hip:gfx942"
    assert derive_compute_target({}, "xeon6", "cpu", ("cpu",)) is None
    assert derive_compute_target({"compute_target": "cuda:sm_86"}, "a10", "cuda", ("ampere",)) == "cuda:sm_86"


def test_interconnect_from_display_name():
    assert derive_interconnect({"display_name": "GB200 NVL4"}) == "nvl4"
    assert derive_interconnect({"display_name": "NVL4ish"}) is None
    assert derive_interconnect({"display_name": "H100"}) is None
    assert derive_interconnect({"interconnect": "pcie", "display_name": "GB200 NVL4"}) == "pcie"


def test_memory_of_one_device_from_the_node_size():
    assert usable_gib(640, 8) == assumed_gib(80) == pytest.approx(79.19, rel=0.002)  # the measured H100
    profile = build_profile("x", {"gpu_count": 2, "vram_gb": 48})
    assert (profile.memory_gb, profile.device_count) == (24, 2)
    unknown = build_profile("x", {})
    assert (unknown.node_memory_gb, unknown.device_count, unknown.devices) == (0.0, None, 1)


def test_precisions_derived_per_platform():
    def formats(**raw):
        return build_profile("x", raw).precisions

    assert formats(brand="NVIDIA", generation="ampere") == frozenset()
    assert formats(brand="NVIDIA", generation="ada") == {"fp8"}
    assert formats(brand="NVIDIA", generation=["blackwell", "ada"]) == BLACKWELL_FORMATS
    assert formats(brand="AMD", generation="amd", display_name="MI355X") == {"fp8", "mxfp4"}
    assert formats(brand="AMD", generation="amd") == frozenset()
    assert formats(brand="Qualcomm", generation="qaic") == frozenset()
    assert formats(brand="Intel", generation="xpu") is None
    assert formats(brand="NVIDIA", generation="hopper", precisions=["fp8", "nvfp4"]) == {"fp8", "nvfp4"}


def test_qaic_layout_derived_without_keys():
    socs = build_profile("qaic", {"brand": "Qualcomm", "generation": "qaic", "gpu_count": 2}).socs
    assert socs is not None and socs.soc_count is None
    profile = build_profile("qaic", {"brand": "Qualcomm", "generation": "qaic", "gpu_count": 2})
    assert profile.container.argv == ("--device", "/dev/accel/accel0", "--device", "/dev/accel/accel1")


def test_custom_profile_keeps_its_usable_memory():
    profile = custom_profile(40.0, 2)
    assert (profile.memory_gib, profile.devices, profile.kind, profile.platform) == (40.0, 2, "gpu", "cuda")


def test_profile_of_finds_the_built_profile(bundled):
    built = bundled["h100"]
    assert profile_of(built.raw) is built
    assert profile_of(None).brand == "" and profile_of({}).devices == 1


# ── precision rules ─────────────────────────────────────────────────────────────────


def test_variant_precision_support(bundled):
    nvfp4 = {"precision": "nvfp4"}
    assert variant_precision_supported(bundled["b200"], nvfp4)
    assert not variant_precision_supported(bundled["h200"], nvfp4)
    assert not variant_precision_supported(bundled["mi355x"], {"precision": "fp4"})
    assert variant_precision_supported(bundled["h200"], {"precision": "fp8"})
    widened = {"precision": "nvfp4", "precision_hardware": {"brand": "AMD"}}
    assert variant_precision_supported(bundled["mi300x"], widened)
    assert not variant_precision_supported(bundled["b200"], widened)
    assert matches_constraint(bundled["rtx_4090_2x"], {"generation": "ada"})
    assert needs_native_precision(nvfp4) and not needs_native_precision({"precision": "mxfp4"})


def test_precision_gaps(bundled):
    assert precision_gap("nvfp4", bundled["b200"]) is None
    gap = precision_gap("NVFP4", bundled["h100"])
    assert gap.precision == "nvfp4" and not gap.weight_only
    assert precision_gap("fp8", build_profile("a100", {"brand": "NVIDIA", "generation": "ampere"})).weight_only
    assert not precision_gap("fp8", bundled["ai100_ultra"]).weight_only
    assert precision_gap("mxfp4", bundled["mi300x"]).weight_only
    assert precision_gap("nvfp4", bundled["xeon6"]) is None
    assert precision_gap("bf16", bundled["h100"]) is None


def test_fp8_kv_cache(bundled):
    assert fp8_kv_cache(bundled["h100"]) is True
    assert fp8_kv_cache(build_profile("a100", {"brand": "NVIDIA", "generation": "ampere"})) is False
    assert fp8_kv_cache(bundled["mi300x"]) is None
