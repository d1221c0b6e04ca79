"""The ``docker run`` flags that expose a node's accelerators to a container, per platform.

Each platform's driver publishes its devices differently: CUDA through the NVIDIA container
runtime (``--gpus all``), ROCm through ``/dev/kfd`` and ``/dev/dri``, Intel XPU through
``/dev/dri``, Ascend through one ``/dev/davinciN`` node per NPU plus the driver's host files,
Cloud AI 100 through one ``/dev/accel/accelN`` node per SoC, TPU through a privileged host
network. ``runtime`` names the ``docker run`` runtime flags a server needs beside them.
"""

from __future__ import annotations

from dataclasses import dataclass

ASCEND_HOST_MOUNTS = (
    "/usr/local/Ascend/driver:/usr/local/Ascend/driver",
    "/etc/ascend_install.info:/etc/ascend_install.info",
    "/usr/local/dcmi:/usr/local/dcmi",
    "/usr/local/bin/npu-smi:/usr/local/bin/npu-smi",
)
DEVICES_PER_LINE = 4


@dataclass(frozen=True)
class ContainerDevices:
    argv: tuple[str, ...]
    """The flags as ``docker run`` arguments."""
    lines: tuple[str, ...]
    """The same flags grouped for a multi-line shell command."""
    runtime: str = "gpu"
    """``gpu`` (IPC host, published port), ``npu`` (host network, large shared memory) or ``cpu``
    (published port, the CPU backend's security options)."""


def _device_nodes(nodes: list[str]) -> tuple[list[str], list[str]]:
    """``--device`` flags for each node: argv, and shell lines of four devices each."""
    flags = [f"--device {n}" for n in nodes]
    lines = [" ".join(flags[i:i + DEVICES_PER_LINE]) for i in range(0, len(flags), DEVICES_PER_LINE)]
    return [t for n in nodes for t in ("--device", n)], lines


def _tpu() -> ContainerDevices:
    return ContainerDevices(("--privileged", "--network", "host", "-v", "/dev/shm:/dev/shm"),
                            ("--privileged --network host", "-v /dev/shm:/dev/shm"))


def _rocm() -> ContainerDevices:
    return ContainerDevices(
        ("--device=/dev/kfd", "--device=/dev/dri", "--security-opt", "seccomp=unconfined", "--group-add", "video"),
        ("--device=/dev/kfd --device=/dev/dri", "--security-opt seccomp=unconfined --group-add video"))


def _xpu() -> ContainerDevices:
    return ContainerDevices(("--device", "/dev/dri", "-v", "/dev/dri/by-path:/dev/dri/by-path", "--shm-size", "16g"),
                            ("--device /dev/dri", "-v /dev/dri/by-path:/dev/dri/by-path --shm-size 16g"))


def _ascend(npus: int) -> ContainerDevices:
    argv, lines = _device_nodes([*(f"/dev/davinci{i}" for i in range(npus)), "/dev/davinci_manager", "/dev/hisi_hdc"])
    argv += [t for m in ASCEND_HOST_MOUNTS for t in ("-v", m)]
    return ContainerDevices(tuple(argv), tuple(lines + [f"-v {m}" for m in ASCEND_HOST_MOUNTS]), runtime="npu")


def _qaic(socs: int) -> ContainerDevices:
    argv, lines = _device_nodes([f"/dev/accel/accel{i}" for i in range(socs)])
    return ContainerDevices(tuple(argv), tuple(lines))


def container_devices(platform: str, devices: int) -> ContainerDevices:
    """Flags for ``devices`` accelerators (NPUs, SoCs) of one node on ``platform``."""
    if platform == "tpu":
        return _tpu()
    if platform == "rocm":
        return _rocm()
    if platform == "xpu":
        return _xpu()
    if platform == "ascend":
        return _ascend(devices)
    if platform == "cpu":
        return ContainerDevices(("--shm-size", "16g"), ("--shm-size 16g",), runtime="cpu")
    if platform == "qaic":
        return _qaic(devices)
    return ContainerDevices(("--gpus", "all"), ("--gpus all",))
