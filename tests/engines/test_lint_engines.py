"""The shared engine interface, driven the same way for every registered engine."""

from __future__ import annotations

import pytest

from servekit.engines.common.engine import Engine
from servekit.engines.common.findings import LintResult
from servekit.engines.common.flags import FlagCatalog
from servekit.engines.registry import engine_names, get_engine
from servekit.errors import ServekitError

MINIMAL = {"max": ["max", "serve", "--model", "m"],
           "sglang": ["python", "-m", "sglang.launch_server", "--model-path", "m"]}


def minimal_command(name: str) -> list[str]:
    return MINIMAL.get(name, ["vllm", "serve", "m"])


@pytest.mark.parametrize("name", engine_names())
def test_every_engine_implements_the_interface(name: str) -> None:
    engine = get_engine(name)
    assert isinstance(engine, Engine) and engine.id == name
    catalog = engine.flag_catalog()
    assert isinstance(catalog, FlagCatalog) and catalog.flags
    assert catalog.version == engine.flag_catalog(catalog.version).version
    split = engine.split_command(minimal_command(name))
    assert split.command in engine.commands and split.args
    result = engine.lint(minimal_command(name))
    assert isinstance(result, LintResult) and result.valid and result.engine == name
    bad = engine.lint([*minimal_command(name), "--no-such-option-anywhere"])
    assert not bad.valid and bad.errors[0].code == "unknown-option"
    assert isinstance(engine.extra_findings(split, catalog), list)


@pytest.mark.parametrize("name", engine_names())
def test_every_engine_reads_its_program_with_env_prefix(name: str) -> None:
    engine = get_engine(name)
    split = engine.split_command(["HF_HOME=/data", *minimal_command(name)])
    assert ("HF_HOME", "/data") in split.env
    assert split.args == engine.split_command(minimal_command(name)).args


def test_registry_is_one_line_per_engine_and_rejects_unknown_names() -> None:
    assert set(engine_names()) >= {"vllm", "vllm-qaic", "vllm-ascend", "max"}
    assert get_engine("vllm") is get_engine("vllm")
    with pytest.raises(ServekitError, match="unknown engine 'tgi'"):
        get_engine("tgi")
