"""The text plan is a script a person can paste: every plan of a catalog passes ``bash -n``, and
``--format sh`` is one POSIX script that exports every env var of the part it runs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from servekit.api.matrix import MatrixContext, hardware_targets, render_hardware
from servekit.api.render import selection_for
from servekit.app.plan import synthesized
from servekit.catalog.documents import bundled_catalog_dir, read_documents
from servekit.errors import ServekitError
from servekit.synthesis.explain import explain, plan_script
from servekit.synthesis.script import posix_script

BASH = shutil.which("bash")
SH = shutil.which("dash") or shutil.which("sh")
SHELLCHECK = shutil.which("shellcheck")
NO_SHELLCHECK = "shellcheck is not installed (scripts/install_system_tools.sh installs it)"
REFERENCE_SAMPLE = 300
"""--format sh scripts of the reference catalog that shellcheck reads (of about 9,000: every
deploy type is among them; all of them take shellcheck some ten minutes)."""


def catalog_plans(root: Path, limit: int | None = None):
    """Every plan the static API would publish for the catalog at ``root`` (headline and alternatives)."""
    docs = read_documents(root)
    ctx = MatrixContext.of(docs)
    plans = {}
    for recipe_id in sorted(docs.recipes)[:limit]:
        recipe = docs.recipes[recipe_id]

        def render(request, recipe_id=recipe_id):
            try:
                plan = synthesized(docs, selection_for(docs, recipe_id, request))
            except ServekitError:
                return None
            plans[(recipe_id, request)] = plan
            return {}

        for variant in recipe.get("variants") or {}:
            for hw in hardware_targets(ctx, recipe, variant):
                render_hardware(ctx, recipe, variant, hw, render)
    return plans


def _syntax_errors(shell: str, text: str, path: Path) -> str:
    path.write_text(text, encoding="utf-8")
    done = subprocess.run([shell, "-n", str(path)], capture_output=True, text=True)
    return done.stderr.strip() if done.returncode else ""


def _check_syntax(shell: str, scripts: dict[str, str], tmp_path: Path) -> None:
    """All scripts in one syntax check (each in a function of its own); one by one when it fails."""
    together = "".join(f"plan_{i}() {{\n{text}\n:\n}}\n" for i, text in enumerate(scripts.values()))
    if not _syntax_errors(shell, together, tmp_path / "all.sh"):
        return
    bad = [f"{name}: {error}" for name, text in scripts.items()
           if (error := _syntax_errors(shell, text, tmp_path / "one.sh"))]
    assert not bad, "\n".join(bad[:5])


def _scripts(plans) -> tuple[dict[str, str], dict[str, str]]:
    text, sh = {}, {}
    for (recipe_id, request), plan in plans.items():
        name = f"{recipe_id} {request}"
        text[name] = "\n".join(explain(plan)) + "\n"
        sh[name] = posix_script(plan_script(plan))
        if plan.docker.image is not None:
            text[f"{name} --docker"] = "\n".join(explain(plan, docker=True)) + "\n"
            sh[f"{name} --docker"] = posix_script(plan_script(plan, docker=True))
    return text, sh


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_every_text_plan_of_the_bundled_catalog_passes_bash_n(tmp_path):
    plans = catalog_plans(bundled_catalog_dir())
    assert len(plans) > 10
    text, sh = _scripts(plans)
    _check_syntax(BASH, text, tmp_path)
    _check_syntax(SH or BASH, sh, tmp_path)


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_reference_catalog_plans_pass_bash_n(reference_catalog, tmp_path):
    plans = catalog_plans(reference_catalog, limit=40)
    deploy_types = {plan.deploy_type for plan in plans.values()}
    assert {"single_node", "multi_node", "pd_cluster"} <= deploy_types
    text, sh = _scripts(plans)
    _check_syntax(BASH, text, tmp_path)
    _check_syntax(SH or BASH, sh, tmp_path)


def shellcheck_findings(scripts: dict[str, str], tmp_path: Path) -> list[str]:
    """shellcheck's findings (all severities, info included) on each script, as ``name: line``."""
    folder = tmp_path / "shellcheck"
    folder.mkdir(exist_ok=True)
    names = {}
    for i, (name, text) in enumerate(scripts.items()):
        (folder / f"{i}.sh").write_text(text, encoding="utf-8")
        names[f"{i}.sh"] = name
    files = sorted(names, key=lambda f: int(f.split(".")[0]))
    found = []
    for start in range(0, len(files), 200):
        done = subprocess.run([SHELLCHECK, "-f", "gcc", *files[start:start + 200]], cwd=folder,
                              capture_output=True, text=True)
        assert done.returncode in (0, 1), done.stderr
        for line in done.stdout.splitlines():
            file, _, rest = line.partition(":")
            found.append(f"{names.get(file, file)}: {rest}")
    return found


@pytest.mark.skipif(SHELLCHECK is None, reason=NO_SHELLCHECK)
def test_every_sh_script_of_the_bundled_catalog_passes_shellcheck(tmp_path):
    _, sh = _scripts(catalog_plans(bundled_catalog_dir()))
    assert len(sh) > 100
    assert shellcheck_findings(sh, tmp_path) == []


@pytest.mark.skipif(SHELLCHECK is None, reason=NO_SHELLCHECK)
def test_reference_catalog_sh_scripts_pass_shellcheck(reference_catalog, tmp_path):
    plans = catalog_plans(reference_catalog, limit=40)
    by_type: dict[str, list] = {}
    for key, plan in plans.items():
        by_type.setdefault(plan.deploy_type, []).append((key, plan))
    assert {"single_node", "multi_node", "pd_cluster"} <= set(by_type)
    share = REFERENCE_SAMPLE // 2 // len(by_type)  # each script has a docker form too
    sample = {key: plan for group in by_type.values() for key, plan in group[::max(1, len(group) // share)]}
    _, sh = _scripts(sample)
    assert len(sh) >= REFERENCE_SAMPLE // 2
    assert shellcheck_findings(sh, tmp_path) == []


def _function_body(script: str, name: str) -> str:
    after = script.split(f"\n{name}() {{\n", 1)[1]
    return re.split(r"^\w+\(\) \{$", after, maxsplit=1, flags=re.M)[0]


def test_sh_exports_every_env_var_of_each_part():
    plans = catalog_plans(bundled_catalog_dir())
    checked = 0
    for plan in plans.values():
        script = posix_script(plan_script(plan))
        for i, proc in enumerate(plan.processes):
            body = _function_body(script, f"part_{i}")
            names = {*plan.env_map(), *proc.env_map()}
            exported = set(re.findall(r"^export ([A-Z_][A-Z0-9_]*)=", body, re.M))
            assert names <= exported, (plan.selection, names - exported)
            checked += len(names)
    assert checked > 0


def test_placeholders_are_explained_and_guarded(reference_catalog):
    from servekit.app.request import PlanRequest
    from servekit.app.plan import plan

    result = plan(PlanRequest("moonshotai/Kimi-K2.5", hardware="h200", strategy="multi_node_tp", nodes=2,
                              checks=False, catalog=str(reference_catalog)))
    text = "\n".join(explain(result.plan))
    assert "#   $HEAD_IP: the head node's IP address" in text and "#   $IFACE_NAME:" in text
    assert "## machine 1 of 2: head, node rank 0" in text and "## machine 2 of 2: worker, node rank 1" in text
    script = posix_script(plan_script(result.plan))
    assert script.startswith("#!/bin/sh\n") and "\nset -eu\n" in script
    assert ': "${HEAD_IP:?set HEAD_IP to the address of the head node' in _function_body(script, "part_1")
    assert '  1) part_1 "$@" ;;' in script and 'part="${1:-}"' in script


@pytest.mark.skipif(SH is None, reason="no POSIX shell")
def test_sh_script_runs_the_part_named_by_its_argument(tmp_path):
    """The script, run with a stub ``vllm`` on PATH, starts the command of the part it is given."""
    from servekit.app.request import PlanRequest
    from servekit.app.plan import plan

    result = plan(PlanRequest("Qwen/Qwen3.8-27B", hardware="h200", features=("long_context",), checks=False))
    script = tmp_path / "plan.sh"
    script.write_text(posix_script(plan_script(result.plan)), encoding="utf-8")
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "vllm").write_text('#!/bin/sh\necho "argv: $*"\necho "env: $VLLM_ALLOW_LONG_MAX_MODEL_LEN"\n')
    (stub / "vllm").chmod(0o755)
    env = {"PATH": f"{stub}:/usr/bin:/bin"}
    done = subprocess.run([SH, str(script), "0"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "argv: serve Qwen/Qwen3.8-27B --tensor-parallel-size" in done.stdout and "env: 1" in done.stdout
    done = subprocess.run([SH, str(script), "7"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 2 and "usage:" in done.stderr
