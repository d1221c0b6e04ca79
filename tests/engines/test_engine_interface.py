"""One interface test run over every registered engine: what each one declares and answers."""

from __future__ import annotations

import re

import pytest

from servekit.engines.common.artifacts import MODEL
from servekit.engines.common.engine import Engine
from servekit.engines.common.flags import FlagCatalog
from servekit.engines.common.install import InstallRecipe
from servekit.engines.common.specs import (
    BOOT,
    BUDGET_CPU_SPACE,
    NOTHING,
    STEPS,
    LaunchSpec,
    MemoryHooks,
    MemoryRule,
    PrecompileSpec,
)
from servekit.engines.common.translation import DialectContext, EngineLaunch
from servekit.engines.install_specs import parse_requirement
from servekit.engines.registry import engine_for_argv, engine_names, get_engine, native_engine
from servekit.errors import ServekitError

VLLM_ARGV = ["vllm", "serve", "org/m", "--max-model-len", "4096", "--port", "8000"]


@pytest.fixture(params=engine_names())
def engine(request) -> Engine:
    return get_engine(request.param)


def test_id_aliases_and_registry(engine: Engine) -> None:
    assert isinstance(engine, Engine) and engine.id and get_engine(engine.id) is engine
    assert all(get_engine(alias) is engine for alias in engine.aliases)


def test_install_spec(engine: Engine) -> None:
    if engine.install is None:
        return
    assert isinstance(engine.install, InstallRecipe) and engine.install.import_name
    spec = parse_requirement(engine.install.requirement)
    assert spec.requirement == engine.install.requirement and spec.import_name == engine.install.import_name


def test_recognizes_its_own_command_lines_only(engine: Engine) -> None:
    if engine.recognizes(list(engine.launch.program)):
        assert engine_for_argv([*engine.launch.program, "--port", "1"]) in (engine, native_engine())
    assert engine_for_argv(["--port", "1"]) is native_engine()


def test_flag_catalog_loads_and_lints(engine: Engine) -> None:
    catalog = engine.flag_catalog()
    assert isinstance(catalog, FlagCatalog) and catalog.flags and catalog.version == engine.default_version
    bad = engine.lint([*engine.launch.program, "--no-such-option-anywhere"])
    assert not bad.valid and any(f.code == "unknown-option" for f in bad.findings)


def test_translate_a_simple_vllm_launch(engine: Engine) -> None:
    launch = engine.translate(VLLM_ARGV, DialectContext(env={"HF_HOME": "/h"}))
    assert isinstance(launch, EngineLaunch) and launch.engine == engine.id and launch.argv
    assert isinstance(engine.plan_fields(launch), dict)
    assert isinstance(engine.validate(list(launch.argv), DialectContext()), list)


def test_artifacts_of_its_translated_launch(engine: Engine) -> None:
    launch = engine.translate(VLLM_ARGV, DialectContext())
    models = [a.repo_id for a in engine.artifacts(list(launch.argv)) if a.role == MODEL]
    assert models == ["org/m"]


def test_precompile_and_launch_specs(engine: Engine) -> None:
    spec = engine.precompile
    assert isinstance(spec, PrecompileSpec) and spec.kind in (BOOT, STEPS, NOTHING) and spec.missing_reason
    assert isinstance(engine.single_process, bool)
    launch = engine.launch
    assert isinstance(launch, LaunchSpec) and launch.program and launch.readiness_path.startswith("/")
    for pattern in launch.log_facts.values():
        assert re.compile(pattern).groups >= 1


def test_memory_hooks(engine: Engine) -> None:
    hooks = engine.memory
    assert isinstance(hooks, MemoryHooks) and isinstance(hooks.rule, MemoryRule)
    cpu = hooks.rule_for("cpu") or native_engine().memory.cpu_rule
    assert cpu is not None and cpu.budget == BUDGET_CPU_SPACE or hooks.cpu_rule is not None


def test_the_vllm_cpu_pool_line_is_read_by_the_launch_spec() -> None:
    pattern = native_engine().launch.log_facts["kv_cache_tokens"]
    assert re.search(pattern, "INFO ... CPU KV cache size: 12,288 tokens").group(1) == "12,288"


def test_unknown_names_say_the_closest_one() -> None:
    with pytest.raises(ServekitError, match="unknown engine 'vlm'; the closest known engine is 'vllm'") as info:
        get_engine("vlm")
    assert "not available" not in str(info.value) and "vllm-qaic" in (info.value.fix or "")
