"""The shape rules of the source tree, checked with ``ast``.

- no module over 400 lines, no function over 80 lines;
- engine ids are spelled only inside their own engine package (``servekit/engines/<engine>/``)
  and the registry: everything else asks ``servekit.engines.registry``;
- no module but ``servekit.atomic`` writes a file: none opens one for writing (``open`` or
  ``Path.open`` with a write mode, ``os.open`` with write flags, ``os.fdopen``, a temporary file)
  or calls ``write_text`` / ``write_bytes`` / ``touch``.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

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


ATOMIC = Path("atomic.py")
WRITE_METHODS = ("write_text", "write_bytes", "touch")
WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
READ_FLAGS = ("O_RDONLY", "O_DIRECTORY", "O_CLOEXEC", "O_NOFOLLOW", "O_PATH", "O_NONBLOCK")
TEMP_FILES = ("NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile", "mkstemp")
MODULES_WITH_FILENAME_FIRST = ("io", "gzip", "lzma", "bz2", "codecs", "tarfile")
"""``X.open(filename, mode)``; any other ``X.open(mode)`` is a ``Path.open``."""


def _mode_writes(node: ast.expr | None) -> bool:
    """A mode argument that may write: a literal with w, a, x or + before any ``:`` (tarfile's
    compression), or anything not a literal (it cannot be read here)."""
    if node is None:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return any(c in node.value.split(":")[0] for c in "wax+")
    return True


def _mode_arg(call: ast.Call, index: int) -> ast.expr | None:
    given = [k.value for k in call.keywords if k.arg == "mode"]
    return given[0] if given else (call.args[index] if len(call.args) > index else None)


def _flags_write(node: ast.expr) -> bool:
    names = {n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(node)
             if isinstance(n, (ast.Attribute, ast.Name)) and (n.attr if isinstance(n, ast.Attribute) else n.id) != "os"}
    return not names <= set(READ_FLAGS) or bool(names & set(WRITE_FLAGS))


def writes_a_file(call: ast.Call) -> bool:
    """Whether this call writes (or opens for writing) a file."""
    func = call.func
    if isinstance(func, ast.Name):
        return (func.id == "open" and _mode_writes(_mode_arg(call, 1))) or func.id in TEMP_FILES
    if not isinstance(func, ast.Attribute):
        return False
    owner = func.value.id if isinstance(func.value, ast.Name) else None
    if func.attr in WRITE_METHODS or func.attr in TEMP_FILES:
        return True
    if owner == "os" and func.attr == "open":
        return len(call.args) < 2 or _flags_write(call.args[1])
    if owner == "os" and func.attr == "fdopen":
        return True
    if func.attr == "open":
        return _mode_writes(_mode_arg(call, 1 if owner in MODULES_WITH_FILENAME_FIRST else 0))
    return False


def test_only_the_atomic_writer_writes_files():
    found = {}
    for rel, _, tree in modules():
        if rel == ATOMIC:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and writes_a_file(node):
                found[f"{rel}:{node.lineno}"] = ast.unparse(node)[:100]
    assert found == {}, "write through servekit.atomic (whole files atomically, logs by appending)"


@pytest.mark.parametrize(("code", "writes"), [
    ('open(p, "w")', True), ('open(p)', False), ('open(p, "rb")', False), ("open(p, mode)", True),
    ('path.open("a", encoding="utf-8")', True), ('path.open("rb")', False), ('path.open(mode="r+")', True),
    ('path.write_text("x")', True), ("path.write_bytes(b)", True), ("path.touch()", True),
    ("os.open(p, os.O_RDONLY)", False), ("os.open(p, os.O_WRONLY | os.O_CREAT)", True), ("os.open(p, flags)", True),
    ('os.fdopen(fd, "wb")', True), ("tempfile.NamedTemporaryFile()", True), ("tempfile.mkstemp()", True),
    ('tarfile.open(a, "r:xz")', False), ('tarfile.open(a, "w:gz")', True), ('lzma.open(p, "rt")', False),
    ('gzip.open(p, "wb")', True), ("tempfile.mkdtemp()", False),
])
def test_the_write_check_sees_a_write_where_one_is_written(code, writes):
    (statement,) = ast.parse(code).body
    assert writes_a_file(statement.value) is writes
