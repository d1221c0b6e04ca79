"""The shape rules of the source tree, checked with ``ast``.

- no module over 400 lines, no function over 80 lines;
- engine ids are spelled only inside their own engine package (``servekit/engines/<engine>/``)
  and the registry: everything else asks ``servekit.engines.registry``.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import servekit

SOURCE = Path(servekit.__file__).resolve().parent
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
ENGINE_IDS = ("max", "vllm-qaic", "vllm-ascend")
REGISTRY = Path("engines/registry.py")
ENGINE_ID_ALLOWED: dict[tuple[str, str], str] = {}
"""(module path under servekit/, literal) -> why that literal there is not an engine id (say, a
JSON schema's ``"max"`` keyword). Keep this list short; each entry says what the word means."""


@cache
def modules() -> tuple[tuple[Path, str, ast.Module], ...]:
    out = []
    for path in sorted(SOURCE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        out.append((path.relative_to(SOURCE), text, ast.parse(text, filename=str(path))))
    return tuple(out)


def engine_packages() -> set[str]:
    """Sub-packages of ``servekit/engines`` that hold one engine (all but the shared ``common``)."""
    engines = SOURCE / "engines"
    return {d.name for d in engines.iterdir() if (d / "__init__.py").is_file() and d.name != "common"}


def inside_an_engine(rel: Path, packages: set[str]) -> bool:
    parts = rel.parts
    return rel == REGISTRY or (len(parts) > 2 and parts[0] == "engines" and parts[1] in packages)


def test_the_source_tree_is_found():
    assert len(modules()) > 50 and (SOURCE / REGISTRY).is_file()


def test_no_module_is_over_400_lines():
    long = {str(rel): len(text.splitlines()) for rel, text, _ in modules()
            if len(text.splitlines()) > MAX_MODULE_LINES}
    assert long == {}, f"split these modules (at most {MAX_MODULE_LINES} lines each)"


def test_no_function_is_over_80_lines():
    long = {}
    for rel, _, tree in modules():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{rel}:{node.lineno} {node.name}"] = lines
    assert long == {}, f"split these functions (at most {MAX_FUNCTION_LINES} lines each)"


def test_engine_ids_are_spelled_only_in_their_engine_package_and_the_registry():
    packages = engine_packages()
    found = {}
    for rel, _, tree in modules():
        if inside_an_engine(rel, packages):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in ENGINE_IDS:
                key = (rel.as_posix(), node.value)
                if key not in ENGINE_ID_ALLOWED:
                    found.setdefault(f"{rel}:{node.lineno}", node.value)
    assert found == {}, "ask servekit.engines.registry instead of naming the engine"


def test_the_engine_id_allow_list_has_no_stale_entries():
    used = {(rel.as_posix(), node.value) for rel, _, tree in modules() for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in ENGINE_IDS}
    assert set(ENGINE_ID_ALLOWED) <= used


def test_the_checks_see_an_engine_id_where_one_is_written():
    tree = ast.parse('ENGINE = "vllm-qaic"\nLIMIT = {"max": 3}')
    literals = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in ENGINE_IDS]
    assert literals == ["vllm-qaic", "max"]
    assert inside_an_engine(Path("engines/qaic/specs.py"), {"qaic"})
    assert not inside_an_engine(Path("engines/common/specs.py"), {"qaic"})
    assert not inside_an_engine(Path("warm/engine_steps.py"), {"qaic"})
