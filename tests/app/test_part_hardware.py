"""A GPU of the device table is hardware for fit, perf and plan when the catalog's taxonomy does
not list it (``servekit.app.part_hardware``): one card or ``_Nx`` cards, the part's vendor,
generation and link, its measured memory where a log gave it (L4 22.03 GiB, L40 44.40) and an
assumed one (said so) where none did."""

from __future__ import annotations

import pytest

from servekit.app.fit import FitOptions, run_fit
from servekit.app.local_hardware import with_local
from servekit.app.part_hardware import part_entry, part_ids
from servekit.app.request import load_documents
from servekit.cli.app import main
from servekit.errors import SelectionError
from servekit.hardware import profile_of

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def test_an_entry_per_part_with_its_card_count_vendor_generation_and_link():
    one, four = part_entry("l4"), part_entry("l4_4x")
    assert (one["brand"], one["generation"], one["gpu_count"], one["vram_gb"]) == ("NVIDIA", "ada", 1, 24)
    assert (four["gpu_count"], four["vram_gb"], four["interconnect"]) == (4, 96, "pcie")
    assert "interconnect" not in one
    assert part_entry("mi325x_8x")["interconnect"] == "xgmi" and "generation" not in part_entry("mi325x")
    assert part_entry("h800_8x")["interconnect"] == "nvlink"


@pytest.mark.parametrize("name", ["t4", "v100_8x", "a10g", "l4_0x", "L4", "tpu_v5e", "ironwood", "l4_4"])
def test_names_that_are_no_plannable_part_build_nothing(name):
    """Pre-Ampere NVIDIA parts (the planner's rules start at Ampere), unknown ids, a zero count and
    other spellings than the table's ids."""
    assert part_entry(name) is None


def test_the_profile_takes_the_measured_memory_where_a_log_gave_it_and_says_when_it_assumes():
    docs = load_documents(None)
    a10 = profile_of(with_local(docs, "a10_2x").taxonomy["hardware_profiles"]["a10_2x"], "a10_2x")
    assert (a10.device_count, a10.memory_gib, a10.platform, a10.interconnect) == (2, 22.06, "cuda", "pcie")
    assert a10.memory_source.startswith("measured") and a10.compute.id == "a10"
    l4 = profile_of(with_local(docs, "l4").taxonomy["hardware_profiles"]["l4"], "l4")
    assert l4.memory_gib == 22.03 and l4.compute.memory_gb_s == 300 and l4.at_least("ada")
    a40 = profile_of(with_local(docs, "a40_4x").taxonomy["hardware_profiles"]["a40_4x"], "a40_4x")
    assert a40.memory_source.startswith("assumed") and a40.device_count == 4


def test_a_catalog_profile_keeps_its_own_entry():
    docs = load_documents(None)
    assert with_local(docs, "h100") is docs and with_local(docs, "rtx_4090_2x") is docs


def test_fit_on_a_part_budgets_its_memory_and_an_unknown_name_lists_the_parts():
    check, _ = run_fit(FitOptions(model=LLAMA, hardware="a10", tp=1, max_model_len="8192"))
    assert check.report.device_memory_gib == 22.06 and check.fits
    with pytest.raises(SelectionError) as raised:
        run_fit(FitOptions(model=LLAMA, hardware="a10_3"))
    assert "a10" in str(raised.value)
    assert {"a10", "a100_40gb", "l4"} <= set(part_ids()) and "t4" not in part_ids()


def test_perf_and_plan_take_a_part(capsys):
    assert main(["perf", LLAMA, "--hardware", "l4", "--tp", "1", "--max-model-len", "8192", "--input-len", "512",
                 "--output-len", "128", "--concurrency", "4"]) == 0
    out = capsys.readouterr().out
    assert "on l4" in out and "binding" in out
    assert main(["plan", LLAMA, "--hardware", "rtx_3090_2x", "--format", "json"]) == 0
    assert '"hardware": "rtx_3090_2x"' in capsys.readouterr().out


def test_the_slo_search_lays_out_a_part_of_several_cards(capsys):
    assert main(["plan", LLAMA, "--hardware", "l4_4x", "--slo", "ttft_ms=5000,tpot_ms=200",
                 "--workload", "512:128:8"]) == 0
    out = capsys.readouterr().out
    assert "met by variant" in out and "--hardware l4_4x" in out


def test_list_hardware_names_the_parts_after_the_catalogs_profiles(capsys):
    assert main(["list", "hardware"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("also as --hardware")
    parts = [name.strip() for name in last.split(":", 1)[1].split(",")]
    assert {"l4", "a10", "rtx_3090", "h100_pcie"} <= set(parts)
    assert "b200" not in parts and "h100" not in parts and "t4" not in parts  # a catalog profile, or not plannable


def test_list_gpus_gives_each_parts_memory_with_its_basis_and_the_speed_figures(capsys):
    """`servekit list gpus`: every GPU of the device tables, the memory the engine sees on one card
    (measured from a public log, or assumed and said so), its speed figures, and whether --hardware
    plans for it; the JSON form carries each memory source."""
    import json

    from servekit.hardware import DEVICE_MEMORY

    assert main(["list", "gpus", "--format", "json"]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    for measured in (m for m in DEVICE_MEMORY if m.brand in ("NVIDIA", "AMD")):  # GPUs; the TPU rows are chips
        row = rows[measured.id]
        assert (row["memory"], row["memory_gib"]) == ("measured", measured.memory_gib)
        assert row["memory_source"] == f"measured: {measured.source}"
    a40 = rows["a40"]
    assert a40["memory"] == "assumed" and "ECC" in a40["memory_source"] and a40["memory_gib"] < 45
    assert a40["bf16_tflops"] > 0 and a40["memory_gb_s"] > 0 and a40["hardware"] is True
    assert rows["t4"]["hardware"] is False and rows["l4"]["hardware"] is True
    check, _ = run_fit(FitOptions(model=LLAMA, hardware="a40", tp=1, max_model_len="8192"))
    assert check.report.device_memory_gib == pytest.approx(a40["memory_gib"], abs=0.01)
    assert main(["list", "gpus"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].split()[:3] == ["id", "brand", "generation"] and text[-1].startswith("memory_gib:")
    assert any(line.split()[0] == "b200" and "measured" in line for line in text[1:-1])
