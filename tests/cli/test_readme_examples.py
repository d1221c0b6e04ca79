"""The README's batch line example plans, and the keys its table names are the keys a line takes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from servekit.cli.app import main
from servekit.jsonl import objects

README = Path(__file__).resolve().parents[2] / "README.md"


def _batch_section() -> str:
    text = README.read_text(encoding="utf-8")
    return text[text.index("### Batch lines"):text.index("### Launching")]


def test_the_readme_batch_line_plans(tmp_path, capsys):
    example = re.search(r"```json\n(.*?)\n```", _batch_section(), re.S).group(1)
    path = tmp_path / "lines.jsonl"
    path.write_text(example + "\n", encoding="utf-8")
    assert main(["plan", "--batch", str(path)]) == 0
    (result,) = objects(capsys.readouterr().out.splitlines())
    assert "error" not in result, result
    assert result["argv"][:2] == ["vllm", "serve"]
    assert set(json.loads(example)) <= set(re.findall(r"^\| `([a-z_]+)` \|", _batch_section(), re.M))


def test_every_key_of_the_table_is_read_by_the_batch_reader():
    keys = re.findall(r"^\| `([a-z_]+)` \|", _batch_section(), re.M)
    source = (Path(__file__).resolve().parents[2] / "src" / "servekit" / "synthesis" / "resolve.py").read_text()
    body = source[source.index("def selection_from_request"):]
    assert keys and all(f'"{key}"' in body for key in keys), keys
