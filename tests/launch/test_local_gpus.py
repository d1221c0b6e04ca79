"""This machine's AMD GPUs (servekit.launch.gpus): rocm-smi's product and VRAM tables become the
GPUs of hardware ``local``, planned on ROCm with the ISA the card reports. No AMD GPU exists on the
machines these tests run on, so rocm-smi is a stand-in script on the PATH that prints the tables
in rocm-smi's JSON form; everything after it (the subprocess calls, parsing, the taxonomy entry
and the profile) is servekit's real code."""

from __future__ import annotations

import json

import pytest

from servekit.app.request import load_documents
from servekit.hardware import build_profile
from servekit.launch.gpus import Gpu, hip_target, parse_rocm_smi
from servekit.launch.machine import detect, taxonomy_entry

MI300X_BYTES = 206141652992  # 191.98 GiB: what vLLM logs on an MI300X (vllm-project/vllm#53961)
PRODUCTS = {"card0": {"Card Series": "AMD Instinct MI300X OAM", "Card Model": "0x74a1", "GFX Version": "gfx942"},
            "card1": {"Card Series": "AMD Instinct MI300X OAM", "Card Model": "0x74a1", "GFX Version": "gfx942"}}
VRAM = {"card0": {"VRAM Total Memory (B)": str(MI300X_BYTES), "VRAM Total Used Memory (B)": "301989888"},
        "card1": {"VRAM Total Memory (B)": str(MI300X_BYTES), "VRAM Total Used Memory (B)": "0"},
        "system": {"Driver version": "6.10.5"}}


def _stand_in(tmp_path, monkeypatch, products: dict, vram: dict) -> None:
    script = tmp_path / "rocm-smi"
    script.write_text("#!/bin/sh\n"
                      "echo 'WARNING: AMD GPU device(s) is/are in a low-power state.' >&2\n"
                      'case "$*" in\n'
                      f"  *--showproductname*) printf '%s\\n' '{json.dumps(products)}' ;;\n"
                      f"  *--showmeminfo*) printf '%s\\n' '{json.dumps(vram)}' ;;\n"
                      "  *) exit 2 ;;\n"
                      "esac\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing else: no nvidia-smi can answer first


def test_an_amd_machine_is_its_gpus_on_rocm_not_a_cpu_node(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch, PRODUCTS, VRAM)
    machine = detect()
    assert machine.gpus == (Gpu("AMD Instinct MI300X OAM", 191.98, vendor="AMD", gfx="gfx942"),) * 2
    entry = taxonomy_entry(machine, load_documents(None).taxonomy["hardware_profiles"])
    assert (entry["brand"], entry["platform"], entry["gpu_count"], entry["compute_target"]) == (
        "AMD", "rocm", 2, "hip:gfx942")
    profile = build_profile("local", entry)
    assert profile.platform == "rocm" and profile.memory_gib == pytest.approx(191.98, abs=0.01)
    assert "/dev/kfd" in " ".join(profile.container.argv)  # the ROCm devices, not --gpus


def test_rocm_smi_fields_in_either_capitalization_and_the_system_entry_skipped():
    cards = {"card1": {"Card series": "Radeon RX 7900 XTX", "VRAM Total Memory (B)": "25753026560",
                       "GFX Version": "gfx1100"},
             "card0": {"Device Name": "AMD Instinct MI210", "VRAM Total Memory (B)": "68702699520",
                       "GFX Version": "gfx9010"},
             "card2": {"Card Series": "no memory table"}, "system": {"Driver version": "6.8.5"}}
    gpus = parse_rocm_smi(cards)
    assert [(g.name, g.gfx) for g in gpus] == [("AMD Instinct MI210", "gfx90a"), ("Radeon RX 7900 XTX", "gfx1100")]
    assert gpus[0].memory_gib == 63.98 and all(g.vendor == "AMD" for g in gpus)


@pytest.mark.parametrize("reported,target", [("gfx942", "gfx942"), ("gfx9010", "gfx90a"), ("gfx90a", "gfx90a"),
                                             ("gfx1100", "gfx1100"), ("N/A", None), ("", None), ("gfx9999", None)])
def test_the_isa_as_hip_names_it(reported, target):
    assert hip_target(reported.lower()) == target


def test_no_tool_no_gpus_and_a_broken_tool_is_no_gpus_either(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert detect().gpus == ()
    _stand_in(tmp_path, monkeypatch, {"card0": "not a table"}, {"card0": {"VRAM Total Memory (B)": "lots"}})
    assert detect().gpus == ()


@pytest.fixture
def fresh_machine():
    """``this_machine`` is detected once per process; the test detects it anew, and leaves none."""
    from servekit.app.local_hardware import this_machine

    this_machine.cache_clear()
    yield
    this_machine.cache_clear()


def test_a_plan_for_this_amd_machine_is_a_rocm_plan(tmp_path, monkeypatch, capsys, fresh_machine):
    from servekit.cli.app import main

    _stand_in(tmp_path, monkeypatch, PRODUCTS, VRAM)
    rc = main(["plan", "Qwen/Qwen3.8-27B", "--hardware", "local"])
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    assert "this machine: 2 x AMD Instinct MI300X OAM" in out and "vllm-openai-rocm" in out
    assert "wheels.vllm.ai/rocm" in out and "fit (serve): fits" in out


def test_this_machines_gpus_have_speed_figures_by_their_model(tmp_path, monkeypatch, capsys, fresh_machine):
    """The local entry names its GPUs' model for the device tables (``device_model``): the taxonomy
    entry's id (an MI300X), else the memory table's row the GPU's name matches (an L4, which no
    taxonomy entry lists), so `perf --hardware local` has the part's speed row."""
    from servekit.cli.app import main
    from servekit.launch.machine import LocalMachine

    profiles = load_documents(None).taxonomy["hardware_profiles"]
    amd = LocalMachine("cpu", 8, 16, 256.0, gpus=(Gpu("AMD Instinct MI300X OAM", 191.98, vendor="AMD", gfx="gfx942"),))
    l4 = LocalMachine("cpu", 8, 16, 256.0, gpus=(Gpu("NVIDIA L4", 22.03, "8.9"),))
    odd = LocalMachine("cpu", 8, 16, 256.0, gpus=(Gpu("NVIDIA Some Future GPU", 50.0, "12.0"),))
    assert taxonomy_entry(amd, profiles)["device_model"] == "mi300x"
    assert build_profile("local", taxonomy_entry(l4, profiles)).compute.id == "l4"
    assert "device_model" not in taxonomy_entry(odd, profiles)
    _stand_in(tmp_path, monkeypatch, PRODUCTS, VRAM)
    assert main(["perf", "Qwen/Qwen3.8-27B", "--hardware", "local", "--input-len", "1024", "--output-len", "256",
                 "--concurrency", "8"]) == 0
    assert "on local" in capsys.readouterr().out
