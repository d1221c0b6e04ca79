"""Properties of the MAX translation over generated vLLM launches built from vLLM's own catalog.

For any launch: nothing is dropped silently (each vLLM option is carried over or listed with a
reason), and every MAX option emitted exists in the stored MAX 26.7 catalogs.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servekit.engines.common.translation import DialectContext
from servekit.engines.max.specs import CATALOGS as MAX_CATALOGS
from servekit.engines.vllm.catalog import CATALOGS as VLLM_CATALOGS
from servekit.engines.max.translate import translate_to_max
from servekit.engines.max.options import RULES
from servekit.engines.max.vocab import RENAMED, SWITCHES

VLLM = VLLM_CATALOGS.load("0.32.0")
MAX_SERVE = MAX_CATALOGS.load("26.7.0")
MAX_WARM = MAX_CATALOGS.load("26.7.0", "warm-cache")
SKIP = {"--model", "--help", "--config", "--data-parallel-size", "--tensor-parallel-size", "--pipeline-parallel-size"}
FLAGS = [spec for spec in VLLM.flags if spec.name.startswith("--") and spec.name not in SKIP]
H200 = {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 8}


def value_for(spec):
    if not spec.takes_value:
        return st.just(None)
    if spec.choices:
        return st.sampled_from(spec.choices)
    return {
        "int": st.integers(1, 64).map(str),
        "float": st.sampled_from(["0.5", "0.9"]),
        "human_int": st.sampled_from(["4096", "32k"]),
        "human_int_or_auto": st.sampled_from(["4096", "32k", "auto"]),
        "json": st.just("{}"),
        "json_object": st.just("{}"),
        "bool": st.sampled_from(["true", "false"]),
    }.get(spec.type, st.sampled_from(["x", "name=path"]))


@st.composite
def launches(draw):
    specs = draw(st.lists(st.sampled_from(FLAGS), max_size=8, unique_by=lambda s: s.name))
    argv = ["vllm", "serve", "org/model"]
    for spec in specs:
        value = draw(value_for(spec))
        argv += [spec.name] if value is None else [spec.name, value]
    tp = draw(st.sampled_from([1, 2, 4, 8]))
    return [*argv, "--tensor-parallel-size", str(tp)]


def handled(flag: str) -> bool:
    return (
        flag in RULES
        or flag in RENAMED
        or flag in SWITCHES
        or flag.removeprefix("--no-") in {s.removeprefix("--") for s in SWITCHES}
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(launches())
def test_no_option_is_dropped_silently_and_every_emitted_option_exists(argv):
    result = translate_to_max(argv, DialectContext(hardware=H200, options={"target": "cuda:sm_90"}))
    listed = {u.flag.split(".")[0] for u in result.untranslated}
    for token in argv[3:]:
        if token.startswith("--"):
            assert handled(token) or token in listed, token
    for token in result.argv[2:]:
        if token.startswith("--"):
            assert MAX_SERVE.get(token) is not None, token
    for token in result.warm_cache_argv[2:]:
        if token.startswith("--"):
            assert MAX_WARM.get(token) is not None, token
