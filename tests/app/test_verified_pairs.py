"""Every verified (recipe, hardware) pair of the reference catalog, planned as ``servekit plan``
plans it (as text and as its docker form), exits 0 or is refused for a reason a person can check.

A recipe marks a pair verified (``meta.hardware: {h200: verified}``): people ran it. Pairs whose
hardware the taxonomy lacks are left out. The plans go through the CLI's own path in this
process (``tests/testing/verified_pairs.py``; ``bench/bench_verified_pairs.py`` prints the same
counts). What still refuses a plan is one of the reasons in ``REASONS``, counted per form in
``EXPECTED``: each is a rule a person can check against the release the finding names (a flag, a
key or a name that release does not have), and each refused plan's findings name their fix.
"""

from __future__ import annotations

from collections import Counter

import pytest

from servekit.catalog.documents import read_documents
from testing.verified_pairs import outcomes, refusal_counts, verified_pairs

REASONS = {
    "unknown-key": (
        "a JSON key the release that runs does not take. DeepSeek-V4 recipes on Blackwell pass "
        "--attention_config.use_fp4_indexer_cache, which vLLM 0.32.0 (the newest release servekit pins: what "
        "an unpinned install and the :latest image run) and 0.33.0 no longer have: DeepSeek-V4-Pro in both "
        "forms, DeepSeek-V4-Flash in its native form only (its image pins vLLM 0.25.0 or a nightly build, "
        "whose docker form warns and names the catalog that would settle it; the native form's fix names "
        "the docker form). Ring-1T-FP8 passes --compilation-config use_inductor, which CompilationConfig no "
        "longer has (closest: use_inductor_graph_partition)"),
    "unknown-option": (
        "NVIDIA-Nemotron-Nano-9B-v2 writes --tool-call-parser-plugin; vLLM's option is --tool-parser-plugin "
        "(the fix names it)"),
    "unknown-tool-call-parser": (
        "the same plans: without the plugin option vLLM takes, the plugin's nemotron_json parser is never "
        "registered"),
    "unknown-attention-backend": (
        "DeepSeek-V4-Flash on dgx_spark_gb10, native form: B12X_MLA_SPARSE exists only in the community "
        "image the recipe names (eugr/spark-vllm-b12x); the fix names the docker form, which warns instead"),
    "bad-config-choice": (
        "the same plan: --speculative-config attention_backend B12X_MLA_SPARSE is no choice of vLLM 0.32.0"),
    "image-without-omni": (
        "docker form only: vLLM-Omni recipes that name no image (LTX-2.5-Diffusers, stable-diffusion-3.5-medium, "
        "GLM-Image) run `vllm serve --omni` in the platform's vLLM image, which has no vLLM-Omni; vLLM's CLI "
        "exits when --omni finds no vllm_omni package (vllm/entrypoints/cli/main.py). The fix names vLLM-Omni's "
        "image for the platform"),
}
IMAGE_DECIDED = {"image-without-omni"}
"""Reasons the image's facts decide, not a release's catalog: they name no release."""
EXPECTED = {
    "text": Counter({"unknown-key": 14, "unknown-option": 3, "unknown-tool-call-parser": 3,
                     "unknown-attention-backend": 1, "bad-config-choice": 1}),
    "docker": Counter({"unknown-key": 8, "unknown-option": 3, "unknown-tool-call-parser": 3, "image-without-omni": 6}),
}


@pytest.fixture(scope="module")
def docs(reference_catalog):
    return read_documents(reference_catalog)


def test_the_reference_catalog_marks_its_verified_pairs(docs):
    pairs = verified_pairs(docs)
    assert len(pairs) == 447 and len(set(pairs)) == len(pairs)


@pytest.mark.parametrize("form", ["text", "docker"])
def test_every_verified_pair_plans_or_is_refused_for_a_named_reason(docs, form):
    results = list(outcomes(docs, forms=(form,)))
    refused = [r for r in results if r.exit_code]
    assert set(refusal_counts(refused)) <= set(REASONS), [r for r in refused if not set(r.reasons) <= set(REASONS)]
    assert refusal_counts(refused) == EXPECTED[form]
    unexplained = [r for r in refused if not r.reasons or not all(r.fixes)
                   or not all(release for release, code in zip(r.releases, r.reasons, strict=True)
                              if code not in IMAGE_DECIDED)]
    assert unexplained == []  # each names its fix and the release it was checked against
    assert len(results) == 447
