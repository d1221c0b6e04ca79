"""The Kubernetes device-plugin resource of every platform, as the typed hardware profile carries it."""

from __future__ import annotations

import pytest

import servekit
from servekit.hardware.device_plugins import MODEL_PLUGINS, PLATFORM_PLUGINS
from servekit.hardware.lookup import profiles_for
from servekit.hardware.profile import PLATFORMS, build_profile

EXPECTED = {"h200": "nvidia.com/gpu", "b200": "nvidia.com/gpu", "mi300x": "amd.com/gpu", "mi355x": "amd.com/gpu",
            "arc_pro_b60": "gpu.intel.com/xe", "trillium": "google.com/tpu", "ironwood": "google.com/tpu",
            "ascend_950pr": "huawei.com/npu", "ai100_ultra": "qualcomm.com/qaic", "xeon6": None}


def test_every_platform_has_an_entry_with_its_source():
    assert set(PLATFORM_PLUGINS) == set(PLATFORMS)
    assert PLATFORM_PLUGINS["cpu"] is None
    for plugin in [*PLATFORM_PLUGINS.values(), *MODEL_PLUGINS.values()]:
        if plugin is not None:
            assert "/" in plugin.resource and plugin.source.startswith("https://")


def test_bundled_profiles_carry_their_plugin():
    profiles = profiles_for(servekit.Catalog.load().documents.taxonomy)
    for hw, resource in EXPECTED.items():
        plugin = profiles[hw].device_plugin
        assert (plugin.resource if plugin else None) == resource, hw
    assert profiles["trillium"].device_plugin.tpu.accelerator == "tpu-v6e-slice"
    assert profiles["ironwood"].device_plugin.tpu.topology_for(1) == "2x2x1"


def test_reference_profiles_without_platform_keys_derive_the_same(reference_catalog):
    """The public taxonomy states no platform: the derivation gives each device its plugin."""
    profiles = profiles_for(servekit.Catalog.load(reference_catalog).documents.taxonomy)
    for hw, resource in EXPECTED.items():
        if hw in profiles:
            plugin = profiles[hw].device_plugin
            assert (plugin.resource if plugin else None) == resource, hw


@pytest.mark.parametrize(("raw", "resource"), [
    ({"brand": "Huawei", "generation": "npu", "display_name": "Ascend 910B"}, "huawei.com/Ascend910"),
    ({"brand": "Intel", "generation": "xpu"}, "gpu.intel.com/xe"),
    ({"brand": "Google", "generation": "tpu", "display_name": "TPU v5e"}, "google.com/tpu"),
])
def test_an_unknown_model_gets_its_platforms_plugin(raw, resource):
    profile = build_profile("custom", raw)
    assert profile.device_plugin.resource == resource
    assert profile.device_plugin.tpu is None
