"""Every rendered shell command splits back (shlex) into exactly its argv."""

from __future__ import annotations

import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from servekit.hardware.container import container_devices
from servekit.synthesis.docker import docker_argv, docker_command
from servekit.synthesis.plan import Docker
from servekit.synthesis.shell import join_continuations, quote, serve_command, text

TOKEN = st.one_of(
    st.text(min_size=1, max_size=30),
    st.sampled_from(["--tensor-parallel-size", "--headless", "$HEAD_IP", '{"method":"mtp"}',
                     "--max-model-len auto", "it's", "a b", "$PREFILL_NODE_1", "--x=$Y", "~/.cache"]),
)
ENV_VALUE = st.one_of(st.text(min_size=0, max_size=20), st.integers(0, 99), st.sampled_from(["$IFACE_NAME"]))
DOCKERS = [
    Docker("vllm/vllm-openai:latest", container_devices("cuda", 8), "test"),
    Docker("quay.io/ascend/vllm-ascend:v0.23.0", container_devices("ascend", 2), "test"),
    Docker("vllm/vllm-tpu:latest", container_devices("tpu", 8), "test", several_nodes=True),
    Docker("example.org/unknown:1", container_devices("cpu", 1), "test"),
]


def _split(command: str) -> list[str]:
    """shlex.split of the command once bash's line continuations are joined."""
    return shlex.split(join_continuations(command))


@settings(max_examples=300, deadline=None)
@given(st.lists(TOKEN, max_size=12))
def test_serve_command_round_trips(tokens):
    assert _split(serve_command("org/model", tokens)) == ["vllm", "serve", "org/model", *tokens]


@settings(max_examples=200, deadline=None)
@given(st.lists(TOKEN, max_size=8),
       st.dictionaries(st.from_regex(r"[A-Z][A-Z0-9_]{0,12}", fullmatch=True), ENV_VALUE, max_size=4),
       st.sampled_from(DOCKERS))
def test_docker_command_round_trips(tokens, env, docker):
    argv = ["vllm", "serve", "org/model", *tokens]
    expected = [text(t) for t in docker_argv(docker, argv, env)]
    assert _split(docker_command(docker, argv, env)) == expected


def test_reference_spelling_is_kept_for_plain_tokens():
    assert quote("$HEAD_IP") == "$HEAD_IP"
    assert quote("qwen3_coder") == "qwen3_coder"
    assert quote('{"a":1}') == "'{\"a\":1}'"


def test_spaced_argument_is_split(reference_docs):
    """One recipe item holding a flag and its value ('--max-model-len auto') becomes two argv items,
    with the provenance of the item, and the command still splits back into the argv."""
    from servekit.differences import DIFFERENCES
    from servekit.synthesis.render import render_plan
    from servekit.synthesis.resolve import resolve_selection
    from servekit.synthesis.synthesize import synthesize

    spaced = [
        rid for rid, recipe in reference_docs.recipes.items()
        if any(" " in str(t) and str(t).startswith("-") for t in (recipe.get("model") or {}).get("base_args") or [])
    ]
    assert spaced, "the reference catalog has a recipe with a spaced token in base_args"
    selection = resolve_selection(reference_docs, spaced[0])
    assert next(d for d in DIFFERENCES if d.id == "spaced-argument-split").applies(reference_docs, selection)
    plan = synthesize(reference_docs, selection)
    rendered = render_plan(plan)
    argv_key, command_key = ("argv", "command") if "argv" in rendered else ("head_argv", "head_command")
    assert _split(rendered[command_key]) == rendered[argv_key]
    assert not any(" " in t for t in rendered[argv_key] if t.startswith("-"))
    argv = rendered[argv_key]
    assert argv[argv.index("--max-model-len") + 1] == "auto"
    arg = next(a for a in plan.processes[0].args if a.flag == "--max-model-len")
    assert arg.value == "auto" and arg.source  # a split item keeps the key it came from


def test_catalog_validate_warns_where_a_spaced_argument_is_written(reference_catalog):
    from servekit.catalog.validate import validate_catalog

    found = [f.render() for f in validate_catalog(reference_catalog) if "one item holding the flag" in f.render()]
    assert found and "MiMo-V2.5-Pro.yaml:25:" in found[0] and "model.base_args[1]" in found[0]
    assert 'write it as two list items: "--max-model-len", "auto"' in found[0]


def test_golden_renderings_round_trip(reference_docs, golden_selections):
    """A sample of real plans: command -> argv and docker_command -> docker_argv."""
    from servekit.app.batch import plan_request

    checked = 0
    for line in golden_selections[::25]:
        rendered = plan_request(reference_docs, line)
        objects = [rendered[r] for r in ("prefill", "decode") if r in rendered] or [rendered]
        for obj in objects:
            for cmd, argv in (("command", "argv"), ("docker_command", "docker_argv"),
                              ("head_command", "head_argv"), ("head_docker_command", "head_docker_argv")):
                if cmd in obj:
                    assert _split(obj[cmd]) == [text(t) for t in obj[argv]]  # no image -> null
                    checked += 1
            for cmd, argv in zip(obj.get("worker_commands", []), obj.get("worker_argvs", []), strict=True):
                assert _split(cmd) == argv
    assert checked > 500


def _command_pairs(rendered: dict):
    """(shell command, argv) pairs of every shape a rendering object can carry."""
    objects = [rendered] + [rendered[r] for r in ("prefill", "decode") if isinstance(rendered.get(r), dict)]
    for obj in objects:
        for cmd, argv in (("command", "argv"), ("docker_command", "docker_argv"), ("head_command", "head_argv"),
                          ("head_docker_command", "head_docker_argv"), ("vllm_command", "vllm_argv"),
                          ("vllm_docker_command", "vllm_docker_argv")):
            if obj.get(cmd) is not None:
                yield obj[cmd], obj[argv]
        for cmds, argvs in (("worker_commands", "worker_argvs"), ("worker_docker_commands", "worker_docker_argvs"),
                            ("vllm_worker_commands", "vllm_worker_argvs")):
            for cmd, argv in zip(obj.get(cmds) or [], obj.get(argvs) or [], strict=True):
                yield cmd, argv


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_random_reference_plans_round_trip(reference_docs, data):
    """Any plan the reference catalog allows: every command splits back into its argv."""
    from servekit.catalog.domain import recipe_of
    from servekit.errors import SelectionError
    from servekit.synthesis import selection as rules
    from servekit.synthesis.render import render_plan
    from servekit.synthesis.resolve import resolve_selection
    from servekit.synthesis.synthesize import synthesize

    docs = reference_docs
    recipe_id = data.draw(st.sampled_from(sorted(docs.recipes)))
    recipe = docs.recipes[recipe_id]
    variant = data.draw(st.sampled_from(sorted(recipe.get("variants") or {"default": {}})))
    typed = recipe_of(docs, recipe_id)
    hardware = data.draw(st.sampled_from(rules.compatible_hardware(docs.taxonomy["hardware_profiles"], typed,
                                                                   variant) or ["h200"]))
    strategy = data.draw(st.sampled_from(rules.effective_compatible_strategies(typed) or ["single_node_tp"]))
    features = data.draw(st.lists(st.sampled_from(sorted(recipe.get("features") or {"_": {}})), unique=True))
    kv = data.draw(st.sampled_from([None, *docs.kv_store, *(docs.taxonomy.get("kv_offload") or {})]))
    try:
        sel = resolve_selection(docs, recipe_id, hardware=hardware, variant=variant, strategy=strategy,
                                features=[f for f in features if f in (recipe.get("features") or {})],
                                kv_offload=kv)
    except SelectionError:
        return  # a combination the rules refuse is refused with a message, never rendered
    rendered = render_plan(synthesize(docs, sel))
    for command, argv in _command_pairs(rendered):
        assert _split(command) == [text(t) for t in argv]
