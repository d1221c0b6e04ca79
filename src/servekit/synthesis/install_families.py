"""How vLLM is installed on each platform family, as data: the steps a plan shows and their sources.

One ``InstallFamily`` per way vLLM reaches a device: NVIDIA CUDA (PyPI wheels, ``uv`` picks the
torch backend), AMD ROCm (vLLM's ROCm wheel index, Python 3.12 only), x86 and Arm CPUs (the CPU
release wheel attached to each GitHub release, with the CPU torch backend), Intel XPU (no wheel:
the container), Google TPU (``vllm-tpu`` from tpu-inference), Huawei Ascend (vLLM plus the
vllm-ascend plugin, on CANN) and Qualcomm Cloud AI 100 (the Cloud AI SDK and QEfficient).

A family writes its pip step for the newest release, for a pinned release (``{version}``) and
for nightly builds, each as shell lines a person pastes; ``no_pip`` says why a family has no pip
path and which container to run instead. ``source`` is the page the steps follow. The commands
are learnt from vLLM's installation guides and from the recipes site's builder
(vllm-project/recipes ``src/components/recipes/CommandBuilder.jsx``, ``InstallBlock``).
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from servekit.records import record

BASE_CUDA = "cu130"
VENV = "uv venv\nsource .venv/bin/activate\n"
VENV_PY312 = "uv venv --python 3.12 --seed --managed-python\nsource .venv/bin/activate\n"
PIP_DEFAULT = VENV + "uv pip install -U vllm --torch-backend auto"
PIP_NIGHTLY = (
    VENV + "uv pip install -U vllm --pre \\\n"
    f"  --extra-index-url https://wheels.vllm.ai/nightly/{BASE_CUDA} \\\n"
    f"  --extra-index-url https://download.pytorch.org/whl/{BASE_CUDA} \\\n"
    "  --index-strategy unsafe-best-match"
)
"""The NVIDIA form the public recipes API publishes under ``model.install.pip``."""

DOCS = "https://github.com/vllm-project/vllm/blob/main/docs/getting_started/installation/"
CUDA_SOURCE = DOCS + "gpu.cuda.inc.md"
ROCM_SOURCE = DOCS + "gpu.rocm.inc.md"
CPU_X86_SOURCE = DOCS + "cpu.x86.inc.md"
CPU_ARM_SOURCE = DOCS + "cpu.arm.inc.md"
XPU_SOURCE = DOCS + "gpu.xpu.inc.md"
TPU_SOURCE = "https://github.com/vllm-project/tpu-inference/blob/main/docs/getting_started/installation.md"
ASCEND_SOURCE = "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/installation.md"
QAIC_SOURCE = "https://quic.github.io/cloud-ai-sdk-pages/ and https://github.com/quic/efficient-transformers"
LATEST_RELEASE = ("VLLM_VERSION=$(curl -s https://api.github.com/repos/vllm-project/vllm/releases/latest"
                  " | jq -r .tag_name | sed 's/^v//')\n")
ASCEND_INDEX = "https://mirrors.huaweicloud.com/ascend/repos/pypi/variant"


@record
class PipForm:
    """The pip commands of one install family: newest, pinned and nightly releases."""

    latest: str
    """Install the newest release."""
    pinned: str
    """Install release ``{version}``."""
    nightly: str | None = None
    """Install the newest nightly build; None: the family publishes none."""
    since: str | None = None
    """The first release with a wheel for this family; older pins have no pip path."""
    note: str | None = None


@record
class InstallFamily:
    """How an engine is installed on one family of platforms (pip, or why not, and what comes first)."""

    id: str
    label: str
    source: str
    pip: PipForm | None = None
    no_pip: str | None = None
    """Why the family has no pip path, and what to run instead."""
    prerequisite: str | None = None
    """A step before the pip install (a vendor toolkit), as a comment line."""
    prerequisite_note: str | None = None
    version_pinned: str | None = None
    """The release a family installs when the plan names none (a plugin pinned to its vLLM)."""

    def pip_command(self, version: str | None = None, nightly: bool = False) -> str | None:
        """The pip step for ``version`` (None: newest), nightly builds, or None without a pip path."""
        if self.pip is None or (version and not self.has_wheel(version)):
            return None
        if nightly and not version and self.pip.nightly:
            return self.pip.nightly
        chosen = version or self.version_pinned
        return self.pip.pinned.replace("{version}", chosen.removeprefix("v")) if chosen else self.pip.latest

    def has_wheel(self, version: str) -> bool:
        """Whether release ``version`` has a wheel for this family (unknown spellings: assume so)."""
        if self.pip is None:
            return False
        if self.pip.since is None:
            return True
        try:
            return Version(version.removeprefix("v")) >= Version(self.pip.since)
        except InvalidVersion:
            return True


CUDA = InstallFamily(
    "cuda", "NVIDIA CUDA", CUDA_SOURCE,
    pip=PipForm(PIP_DEFAULT, VENV + 'uv pip install "vllm=={version}" --torch-backend auto', PIP_NIGHTLY))
ROCM = InstallFamily(
    "rocm", "AMD ROCm", ROCM_SOURCE,
    pip=PipForm(
        VENV_PY312 + "uv pip install vllm --extra-index-url https://wheels.vllm.ai/rocm/ --upgrade",
        VENV_PY312 + "VLLM_ROCM_VARIANT=$(curl -s https://wheels.vllm.ai/rocm/{version}/ | grep -oP 'rocm\\d+' | head -1)\n"
        'uv pip install "vllm=={version}" --extra-index-url "https://wheels.vllm.ai/rocm/{version}/${VLLM_ROCM_VARIANT}"',
        VENV_PY312 + "VLLM_ROCM_VARIANT=$(curl -s https://wheels.vllm.ai/rocm/nightly | grep -oP 'rocm\\d+' | head -1)\n"
        'uv pip install --pre vllm --extra-index-url "https://wheels.vllm.ai/rocm/nightly/${VLLM_ROCM_VARIANT}" \\\n'
        "  --index-strategy unsafe-best-match",
        since="0.14.0",
        note="vLLM's ROCm wheels exist for Python 3.12 only (any other Python falls back to the CUDA wheel "
             "from PyPI, which fails on AMD GPUs); they bundle their ROCm PyTorch"))
def _cpu_family(arch: str, wheel_platform: str, source: str, since: str, note: str) -> InstallFamily:
    """vLLM's CPU release wheel for one architecture: attached to each GitHub release, torch from
    the CPU backend; nightly builds on the CPU nightly index."""
    wheel = "https://github.com/vllm-project/vllm/releases/download/v{v}/vllm-{v}+cpu-cp38-abi3-" + wheel_platform
    return InstallFamily(
        f"cpu-{arch}", "Arm CPU" if arch == "aarch64" else "x86 CPU", source,
        pip=PipForm(
            VENV_PY312 + LATEST_RELEASE + f'uv pip install "{wheel.format(v="${VLLM_VERSION}")}" --torch-backend cpu',
            VENV_PY312 + f'uv pip install "{wheel.format(v="{version}")}" --torch-backend cpu',
            VENV_PY312 + "uv pip install vllm --extra-index-url https://wheels.vllm.ai/nightly/cpu \\\n"
            "  --index-strategy first-index --torch-backend cpu",
            since=since, note=note))


CPU_X86 = _cpu_family(
    "x86_64", "manylinux_2_34_x86_64.whl", CPU_X86_SOURCE, "0.17.0",
    "the CPU release wheel is published apart from the CUDA wheels (AVX512 recommended, AVX2 limited); add "
    "Intel OpenMP (libiomp5.so) to LD_PRELOAD before serving")
CPU_ARM = _cpu_family(
    "aarch64", "manylinux_2_35_aarch64.whl", CPU_ARM_SOURCE, "0.11.2",
    "the Arm CPU release wheel (NEON required); vLLM preloads TCMalloc and picks libgomp itself")
XPU = InstallFamily(
    "xpu", "Intel XPU", XPU_SOURCE,
    no_pip="vLLM publishes no Intel XPU wheels: run the vllm/vllm-openai-xpu image (the docker form), "
           f"or build from source ({XPU_SOURCE})")
TPU = InstallFamily(
    "tpu", "Google TPU", TPU_SOURCE,
    pip=PipForm(VENV_PY312 + "uv pip install vllm-tpu", VENV_PY312 + 'uv pip install "vllm-tpu=={version}"',
                note="vllm-tpu is vLLM built with the tpu-inference plugin; TPU v6e and older may need the "
                     "release the tpu-inference installation guide names"))
ASCEND_PIP = (VENV_PY312 + 'uv pip install "vllm=={version}"\n'
              f'uv pip install --extra-index-url {ASCEND_INDEX} "vllm-ascend=={{version}}"')
ASCEND = InstallFamily(
    "ascend", "Huawei Ascend (vllm-ascend)", ASCEND_SOURCE,
    pip=PipForm(ASCEND_PIP, ASCEND_PIP, note="vLLM and the Ascend plugin at the same release; vllm-ascend brings torch-npu"),
    prerequisite="# install the NPU firmware and driver, CANN and NNAL for your NPU first "
                 f"({ASCEND_SOURCE}; npu-smi info checks the driver)",
    prerequisite_note="vllm-ascend {version} needs the CANN release its installation guide names",
    version_pinned="0.23.0")
QAIC = InstallFamily(
    "qaic", "Qualcomm Cloud AI 100", QAIC_SOURCE,
    pip=PipForm(VENV + 'uv pip install "git+https://github.com/quic/efficient-transformers"',
                VENV + 'uv pip install "git+https://github.com/quic/efficient-transformers"',
                note="QEfficient compiles the model into a QPC; vLLM's qaic build ships in the Cloud AI SDK image"),
    prerequisite="# install the Cloud AI 100 Platform and Apps SDKs from Qualcomm first "
                 "(https://quic.github.io/cloud-ai-sdk-pages/)",
    prerequisite_note="the SDKs provide the qaic runtime and the compiler the QPC is built with")

FAMILIES = {f.id: f for f in (CUDA, ROCM, CPU_X86, CPU_ARM, XPU, TPU, ASCEND, QAIC)}
_BY_PLATFORM = {"cuda": CUDA, "rocm": ROCM, "xpu": XPU, "tpu": TPU, "ascend": ASCEND, "qaic": QAIC}


def family_for(platform: str, cpu_arch: str | None = None) -> InstallFamily:
    """The install family of a hardware platform (a CPU's by its architecture); CUDA otherwise."""
    if platform == "cpu":
        return CPU_ARM if cpu_arch == "aarch64" else CPU_X86
    return _BY_PLATFORM.get(platform, CUDA)
