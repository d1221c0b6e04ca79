"""How Kubernetes hands a node's accelerators to a pod: the device plugin's resource name and
the node labels a pod selects, per platform (and per device model where the vendor's plugin
names models apart).

Every entry is a fact from the vendor's device-plugin documentation, kept with its source so it
can be checked again when a plugin renames a resource. A CPU platform has no entry: its pods ask
for no device.
"""

from __future__ import annotations

from dataclasses import field

from servekit.records import record

TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
TPU_SOURCE = "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus"


@record
class TpuSlice:
    """A GKE TPU node: the accelerator label value and the single-host topologies by chip count."""

    accelerator: str
    topologies: tuple[tuple[int, str], ...]
    """(chips on the host, ``cloud.google.com/gke-tpu-topology`` value), smallest first."""
    source: str

    def topology_for(self, chips: int) -> str | None:
        """The smallest single-host topology with at least ``chips`` chips (None: none is that big)."""
        return next((topo for count, topo in self.topologies if count >= chips), None)


@record
class DevicePlugin:
    """The extended resource a container requests for one device, and what else the pod needs."""

    resource: str
    source: str
    note: str = ""
    tpu: TpuSlice | None = None
    selects_devices: tuple[str, ...] = field(default_factory=tuple)
    """Environment variables that pick devices by host index; in a pod the plugin hands the
    container exactly its devices, so such a selection from a host plan no longer applies."""


NVIDIA = DevicePlugin(
    "nvidia.com/gpu", "https://github.com/NVIDIA/k8s-device-plugin (README: Running GPU Jobs); "
    "https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/",
    selects_devices=("CUDA_VISIBLE_DEVICES",))
AMD = DevicePlugin(
    "amd.com/gpu", "https://github.com/ROCm/k8s-device-plugin (example/pod/alexnet-gpu.yaml); "
    "https://instinct.docs.amd.com/projects/k8s-device-plugin/en/latest/",
    selects_devices=("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"))
INTEL_XE = DevicePlugin(
    "gpu.intel.com/xe",
    "https://intel.github.io/intel-device-plugins-for-kubernetes/cmd/gpu_plugin/README.html (resources table)",
    "devices on the xe kernel driver (Arc Pro B-series); nodes on the legacy i915 driver expose "
    "gpu.intel.com/i915 instead: check `kubectl describe node`",
    selects_devices=("ZE_AFFINITY_MASK",))
ASCEND_910 = DevicePlugin(
    "huawei.com/Ascend910",
    "https://www.hiascend.com/document/detail/en/mindcluster/730/clustersched/schedulingug/dlruntime_ug_007.html",
    "MindCluster Ascend Device Plugin, whole NPUs; the name follows the chip the plugin reports "
    "(huawei.com/Ascend910, huawei.com/Ascend310P): check `kubectl describe node`",
    selects_devices=("ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES"))
ASCEND_950 = DevicePlugin(
    "huawei.com/npu",
    "https://gitcode.com/Ascend/mind-cluster/blob/master/docs/en/release_notes.md (26.0.0: for the Atlas 350 "
    "card, Ascend 950, the resource huawei.com/Ascend910 is changed to huawei.com/npu)",
    "MindCluster Ascend Device Plugin 26.0.0 or later; older plugins do not report Ascend 950",
    selects_devices=("ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES"))
QAIC = DevicePlugin(
    "qualcomm.com/qaic",
    "https://docs.qualcomm.com/doc/80-99100-3/topic/production-serving-management.html "
    "(cloud_ai_k8s_device_plugin); https://nrp.ai/documentation/userdocs/qaic/ (one resource per device)",
    "Cloud AI 100 device plugin: one resource per SoC (/dev/accel/accelN)")
TRILLIUM = TpuSlice("tpu-v6e-slice", ((1, "1x1"), (4, "2x2"), (8, "2x4")), TPU_SOURCE)
IRONWOOD = TpuSlice(
    "tpu7x", ((4, "2x2x1"),),
    "https://docs.cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood (each VM has four chips)")


def _tpu(slice_: TpuSlice | None) -> DevicePlugin:
    return DevicePlugin("google.com/tpu", f"{TPU_SOURCE}; {slice_.source}" if slice_ else TPU_SOURCE, tpu=slice_,
                        selects_devices=("TPU_VISIBLE_CHIPS",))


PLATFORM_PLUGINS: dict[str, DevicePlugin | None] = {
    "cuda": NVIDIA, "rocm": AMD, "xpu": INTEL_XE, "tpu": _tpu(None), "ascend": ASCEND_910, "qaic": QAIC, "cpu": None,
}
"""The plugin of each platform's devices; None: CPU hardware asks for no device."""
MODEL_PLUGINS: dict[str, DevicePlugin] = {
    "ascend_950pr": ASCEND_950, "trillium": _tpu(TRILLIUM), "ironwood": _tpu(IRONWOOD),
}
"""Device models whose plugin entry differs from their platform's, keyed by device model name
(a profile id without its card-count suffix, or its display name; see ``device_model_names``)."""


def derive_device_plugin(model_names: tuple[str, ...], platform: str) -> DevicePlugin | None:
    """The device model's entry, else the platform's; None on CPU hardware."""
    for name in model_names:
        if name in MODEL_PLUGINS:
            return MODEL_PLUGINS[name]
    return PLATFORM_PLUGINS.get(platform, NVIDIA)

