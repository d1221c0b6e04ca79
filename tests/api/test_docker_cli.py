"""Every ``docker run`` form of the bundled and the reference catalogs, parsed by the real docker CLI.

The forms are the API tree's (``docker_argv`` / ``docker_command`` of every rendering, PD roles
and Mooncake instances included) and the ``plan --docker`` forms of the translated engines
(vllm-ascend, vllm-qaic, SGLang, MAX). Forms whose options up to the image are alike
(variables compared by name) parse alike, so one of each runs as a program runs it (no shell),
and one shell text per option list through ``sh`` with the plan's placeholders set to themselves. The CLI talks to ``ParseOnlyDaemon``
(``testing.docker_cli``), which records what the CLI would create and creates nothing.
"""

from __future__ import annotations

import re
import shlex
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from servekit.api.build import build_in_memory
from servekit.app.plan import plan
from servekit.app.plan_view import engine_docker
from servekit.app.request import PlanRequest
from servekit.catalog.documents import read_documents
from servekit.errors import ServekitError

from testing.docker_cli import DOCKER, ParseOnlyDaemon, repeated, split_options

pytestmark = pytest.mark.skipif(DOCKER is None, reason="the docker CLI is not installed")

BUNDLED = Path(__file__).resolve().parents[2] / "src" / "servekit" / "catalog_data"
WORKERS = 2
RETRIES = 3
LOST_DAEMON = ("unknown server OS", "Cannot connect to the Docker daemon")
"""The CLI's words when its ping of the stand-in daemon got no answer in time (a loaded machine):
not a verdict on the form, so the run is repeated."""
PLACEHOLDER = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
ENGINE_PLANS = [(hw, engine) for hw in ("h200", "mi300x", "mi355x", "trillium", "arc_pro_b60", "xeon6")
                for engine in ("vllm", "sglang", "max")] + [("ascend_950pr", "vllm"), ("ai100_standard", "vllm")]


def _forms(doc):
    """(argv, shell text or None) of every docker form in a rendering object."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key.endswith("docker_argv") and value:
                yield [str(w) for w in value], doc.get(key.replace("argv", "command"))
            elif key.endswith("docker_argvs") and isinstance(value, list):
                texts = doc.get(key.replace("argvs", "commands")) or [None] * len(value)
                yield from (([str(w) for w in a], t) for a, t in zip(value, texts, strict=True) if a)
            else:
                yield from _forms(value)
    elif isinstance(doc, list):
        for item in doc:
            yield from _forms(item)


def _tree_forms(tree) -> list[tuple[list[str], str | None]]:
    return [form for rel in tree for form in _forms(tree.get(rel))]


def _engine_forms() -> list[tuple[list[str], str]]:
    """``plan --docker`` of the bundled recipes on each platform, in each engine that applies there."""
    out = []
    docs = read_documents(BUNDLED)
    for recipe in sorted(docs.recipes):
        for hardware, engine in ENGINE_PLANS:
            try:
                result = plan(PlanRequest(recipe, hardware=hardware, engine=engine, checks=False, documents=docs))
            except ServekitError:
                continue  # the recipe does not run there
            for pc in result.commands or ():
                form = engine_docker(result, pc)
                if form:
                    out.append(([str(w) for w in form[1]], form[0]))
    return out


def _kind(argv: list[str], env_names: bool) -> tuple:
    """What the CLI checks of a form: its options up to the image, an ``-e`` by its variable name
    alone (the CLI checks the name; the value is the container's) or not at all."""
    pairs, image_at = split_options(argv)
    kept = tuple((f, str(v).split("=", 1)[0] if f in ("-e", "--env") else v) for f, v in pairs
                 if env_names or f not in ("-e", "--env"))
    return (*kept, argv[image_at])


def _representatives(forms) -> list[tuple[list[str], str | None]]:
    """One argv per kind of option list (variables by name); its shell text too for one form
    per option list without variables (the text splits back into the argv for every form: the
    shell round-trip tests)."""
    argvs: dict[tuple, list[str]] = {}
    texts: dict[tuple, tuple[list[str], str]] = {}
    for argv, text in forms:
        argvs.setdefault(_kind(argv, True), argv)
        if text is not None:
            texts.setdefault(_kind(argv, False), (argv, text))
    shown = {id(argv) for argv, _ in texts.values()}
    return [*texts.values(), *((argv, None) for argv in argvs.values() if id(argv) not in shown)]


def _check(daemon: ParseOnlyDaemon, argv: list[str], text: str | None) -> list[str]:
    """What is wrong with one form: a CLI refusal, or a request that is not the form's."""
    problems = []
    ok, output, request = _patiently(lambda: daemon.run(argv))
    if not ok:
        return [f"{shlex.join(argv[:_prefix_len(argv)])}: {output.splitlines()[0] if output else 'no output'}"]
    host = request["HostConfig"]
    if host.get("NetworkMode") == "host" and host.get("PortBindings"):
        problems.append(f"ports published beside the host network: {host['PortBindings']}")
    for bind in host.get("Binds") or []:
        if not bind.startswith(("/", "~/", "$")):  # a $PLACEHOLDER path is the person's to set
            problems.append(f"bind source is neither absolute, the home folder nor a placeholder: {bind}")
    image_at = split_options(argv)[1]
    if request["Image"] != argv[image_at] or (request.get("Cmd") or []) != argv[image_at + 1:]:
        problems.append(f"the CLI read another image or command: {request['Image']} {request.get('Cmd')}")
    if text is not None:
        names = {name: f"${name}" for name in PLACEHOLDER.findall(text)}
        shell_ok, shell_output, from_text = _patiently(lambda: daemon.run_shell(text, names))
        home = f"{daemon.folder}/"
        if not shell_ok:
            problems.append(f"the shell form fails: {shell_output.splitlines()[0] if shell_output else ''}")
        elif _container(from_text) != _container(request, home):
            problems.append("the shell form asks for another container than its argv")
    return [f"{argv[image_at]}: {p}" for p in problems]


def _patiently(run):
    for _ in range(RETRIES - 1):
        result = run()
        if result[0] or not any(words in result[1] for words in LOST_DAEMON):
            return result
    return run()


def _container(request: dict, home: str | None = None) -> dict:
    """A create request with its lists in one order (the CLI orders binds and env as a map
    iterates); ``home`` replaces a leading ``~/`` as the shell expands it."""
    host = dict(request["HostConfig"])
    binds = [b.replace("~/", home, 1) if home and b.startswith("~/") else b for b in host.get("Binds") or []]
    host["Binds"] = sorted(binds)
    return {**request, "HostConfig": host, "Env": sorted(request.get("Env") or [])}


def _prefix_len(argv: list[str]) -> int:
    return split_options(argv)[1] + 1


def _parse_all(tmp_path: Path, forms) -> tuple[int, list[str]]:
    reps = _representatives(forms)
    chunks = [reps[i::WORKERS] for i in range(WORKERS)]

    def work(index: int) -> list[str]:
        folder = tmp_path / f"d{index}"
        folder.mkdir()
        with ParseOnlyDaemon(folder) as daemon:
            return [p for argv, text in chunks[index] for p in _check(daemon, argv, text)]

    with ThreadPoolExecutor(WORKERS) as pool:
        problems = [p for found in pool.map(work, range(WORKERS)) for p in found]
    return len(reps), problems


def _assert_forms(tmp_path: Path, forms) -> None:
    assert forms
    twice = [(repeated(argv), argv[:_prefix_len(argv)]) for argv, _ in forms if repeated(argv)]
    assert not twice, twice[:3]
    parsed, problems = _parse_all(tmp_path, forms)
    print(f"\n{len(forms)} docker forms, {parsed} kinds of option list parsed by {DOCKER}")
    assert not problems, f"{len(problems)} problems, e.g.:\n" + "\n".join(sorted(set(problems))[:15])


def test_the_docker_cli_parses_every_form_of_the_bundled_catalog(tmp_path):
    forms = _tree_forms(build_in_memory(read_documents(BUNDLED))[0]) + _engine_forms()
    _assert_forms(tmp_path, forms)


def test_the_docker_cli_parses_every_form_of_the_reference_catalog(tmp_path, recorded_build):
    _assert_forms(tmp_path, _tree_forms(recorded_build[0]))


def test_a_form_the_cli_refuses_is_reported(tmp_path):
    """The check itself: a misspelt flag and a bad device mode are the CLI's own errors."""
    bad = [(["docker", "run", "--gpus", "all", "--privilegd", "img", "m"], None),
           (["docker", "run", "--device", "/dev/dri:/dev/dri:rwz", "img", "m"], None)]
    parsed, problems = _parse_all(tmp_path, bad)
    assert parsed == 2 and len(problems) == 2
    assert any("unknown flag: --privilegd" in p for p in problems) and any("bad mode" in p for p in problems)
