"""Every ``servekit up`` example of the README works as written.

Each example line of the README's code blocks that starts ``servekit up`` runs in a folder
where ``./my-model`` is a tiny local Llama (the README's placeholder for a model directory):
all of them as ``--dry-run`` (a start is printed, nothing starts) in the fast suite, and those
that start a server here (``--detach`` without ``--docker``) for real in the engine suite, then
``down``. The container examples need a Docker engine and their image (a registry placeholder):
``tests/launch/test_docker_engine.py`` runs that form against a real engine.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from launch.engine_runs import none_alive, use_engine
from servekit.cli.app import main
from servekit.engines.registry import native_engine
from testing.tiny_model import TinyLlamaShape, write_tiny_llama

README = Path(__file__).resolve().parents[2] / "README.md"
SHAPE = TinyLlamaShape(layers=2, hidden=256, heads=4, kv_heads=2, head_dim=64)


def readme_up_examples() -> list[list[str]]:
    """The argv (after ``servekit``) of each ``servekit up`` line inside the README's code blocks."""
    examples, inside = [], False
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside and line.startswith("servekit up "):
            examples.append(shlex.split(line, comments=True)[1:])
    return examples


EXAMPLES = readme_up_examples()


@pytest.fixture
def in_folder_with_my_model(tmp_path, monkeypatch) -> Path:
    write_tiny_llama(tmp_path / "my-model", shape=SHAPE, dtype="bfloat16")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_has_up_examples():
    assert len(EXAMPLES) >= 2 and any("./my-model" in e for e in EXAMPLES)


@pytest.mark.parametrize("argv", EXAMPLES, ids=" ".join)
def test_each_readme_up_example_plans_with_exit_0(in_folder_with_my_model, capsys, argv):
    dry = [w for w in argv if w != "--detach"] + ([] if "--dry-run" in argv else ["--dry-run"])
    code = main(dry)
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "refused" not in out


@pytest.mark.engine
@pytest.mark.parametrize("argv", [e for e in EXAMPLES if "--detach" in e and "--docker" not in e], ids=" ".join)
def test_each_readme_up_example_that_starts_a_server_starts_it(in_folder_with_my_model, capsys, monkeypatch, argv):
    use_engine(native_engine().id, monkeypatch)
    code = main([*argv, "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-4000:]
    started = json.loads(captured.out.strip().splitlines()[-1])
    try:
        assert main(["verify", started["run"]]) == 0
    finally:
        assert main(["down", started["run"]]) == 0
    assert none_alive(started["pids"])
