"""How a container reaches a node's accelerators, per platform: the ``docker run`` rules.

Each platform's driver publishes its devices differently, and its serving docs say what else the
container needs. One ``ContainerDevices`` per platform holds the flags in four groups, each
named once so that no flag is written twice:

- ``argv`` / ``lines``: the devices (CUDA through the NVIDIA container runtime's ``--gpus``;
  ROCm through ``/dev/kfd`` and ``/dev/dri`` with the ``video`` group; Intel XPU through
  ``/dev/dri``; Ascend through one ``/dev/davinciN`` node per NPU, its manager nodes and the
  driver's host files; Cloud AI 100 through one ``/dev/accel/accelN`` node per SoC; TPU chips
  through a privileged container);
- ``security``: ``--privileged``, or the narrower capabilities a CPU server needs;
- ``shared_memory``: exactly one way to give PyTorch's worker processes shared memory
  (``--ipc=host``, ``--shm-size``, or the host's ``/dev/shm`` bound in);
- ``host_network``: the platform's collective library needs the host network even on one node.

``source`` names where each platform's rules were read.
"""

from __future__ import annotations

from servekit.records import record

ASCEND_HOST_MOUNTS = (
    "/usr/local/Ascend/driver:/usr/local/Ascend/driver",
    "/etc/ascend_install.info:/etc/ascend_install.info",
    "/usr/local/dcmi:/usr/local/dcmi",
    "/usr/local/bin/npu-smi:/usr/local/bin/npu-smi",
)
ASCEND_MANAGER_DEVICES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
"""Device nodes every Ascend container needs beside its NPUs (vllm-ascend installation guide)."""
DEVICES_PER_LINE = 4
IPC_HOST = ("--ipc=host",)
PRIVILEGED = ("--privileged",)
SHM_16G = ("--shm-size", "16g")

CUDA_SOURCE = ("https://docs.vllm.ai/en/latest/deployment/docker.html; vllm-project/recipes "
               "src/lib/command-synthesis.js (dockerGpuArgv, buildDockerArgv)")
ROCM_SOURCE = "https://github.com/vllm-project/vllm/blob/main/docs/getting_started/installation/gpu.rocm.inc.md"
XPU_SOURCE = "https://github.com/vllm-project/vllm/blob/main/docs/getting_started/installation/gpu.xpu.inc.md"
CPU_SOURCE = ("https://github.com/vllm-project/vllm/blob/main/docs/getting_started/installation/cpu.x86.inc.md "
              "(Launching the OpenAI server; cpu.arm.inc.md: --cap-add SYS_NICE --security-opt "
              "seccomp=unconfined instead of --privileged)")
TPU_SOURCE = "https://github.com/vllm-project/tpu-inference/blob/main/docs/getting_started/installation.md"
ASCEND_SOURCE = "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/installation.md"
QAIC_SOURCE = "https://quic.github.io/cloud-ai-sdk-pages/ (Cloud AI 100 devices: /dev/accel/accelN per SoC)"


@record
class ContainerDevices:
    """How a container reaches a platform's devices: the ``docker run`` flags and what goes with them."""

    argv: tuple[str, ...]
    """The device flags as ``docker run`` arguments."""
    lines: tuple[str, ...]
    """The same flags grouped for a multi-line shell command."""
    security: tuple[str, ...] = PRIVILEGED
    shared_memory: tuple[str, ...] = IPC_HOST
    host_network: bool = False
    """The platform needs the host network on one node too (TPU, Ascend HCCL)."""
    source: str = CUDA_SOURCE


def _device_nodes(nodes: list[str]) -> tuple[list[str], list[str]]:
    """``--device`` flags for each node: argv, and shell lines of four devices each."""
    flags = [f"--device {n}" for n in nodes]
    lines = [" ".join(flags[i:i + DEVICES_PER_LINE]) for i in range(0, len(flags), DEVICES_PER_LINE)]
    return [t for n in nodes for t in ("--device", n)], lines


def _tpu() -> ContainerDevices:
    # The chips are reached through a privileged container; the host's /dev/shm is bound in.
    return ContainerDevices((), (), shared_memory=("-v", "/dev/shm:/dev/shm"), host_network=True, source=TPU_SOURCE)


def _rocm() -> ContainerDevices:
    return ContainerDevices(
        ("--device=/dev/kfd", "--device=/dev/dri", "--security-opt", "seccomp=unconfined", "--group-add", "video"),
        ("--device=/dev/kfd --device=/dev/dri", "--security-opt seccomp=unconfined --group-add video"),
        source=ROCM_SOURCE)


def _xpu() -> ContainerDevices:
    return ContainerDevices(("--device", "/dev/dri", "-v", "/dev/dri/by-path:/dev/dri/by-path"),
                            ("--device /dev/dri", "-v /dev/dri/by-path:/dev/dri/by-path"), source=XPU_SOURCE)


def _cpu() -> ContainerDevices:
    return ContainerDevices((), (), security=("--security-opt", "seccomp=unconfined", "--cap-add", "SYS_NICE"),
                            shared_memory=SHM_16G, source=CPU_SOURCE)


def _ascend(npus: int) -> ContainerDevices:
    argv, lines = _device_nodes([*(f"/dev/davinci{i}" for i in range(npus)), *ASCEND_MANAGER_DEVICES])
    argv += [t for m in ASCEND_HOST_MOUNTS for t in ("-v", m)]
    return ContainerDevices(tuple(argv), tuple(lines + [f"-v {m}" for m in ASCEND_HOST_MOUNTS]),
                            shared_memory=SHM_16G, host_network=True, source=ASCEND_SOURCE)


def _qaic(socs: int) -> ContainerDevices:
    argv, lines = _device_nodes([f"/dev/accel/accel{i}" for i in range(socs)])
    return ContainerDevices(tuple(argv), tuple(lines), source=QAIC_SOURCE)


def container_devices(platform: str, devices: int) -> ContainerDevices:
    """Rules for ``devices`` accelerators (NPUs, SoCs) of one node on ``platform``."""
    if platform == "tpu":
        return _tpu()
    if platform == "rocm":
        return _rocm()
    if platform == "xpu":
        return _xpu()
    if platform == "ascend":
        return _ascend(devices)
    if platform == "cpu":
        return _cpu()
    if platform == "qaic":
        return _qaic(devices)
    return ContainerDevices(("--gpus", "all"), ("--gpus all",))
