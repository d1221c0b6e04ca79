"""The profile run's speculative-decoding terms: the drafter's dummy pass and the rejection
sampler's dummy pass (``servekit.fit.memory``)."""

from __future__ import annotations

import shlex

import pytest

from servekit.facts.model import ModelFacts
from servekit.fit.constants import value
from servekit.fit.hardware import device_from_profile
from servekit.fit.launch import launch_settings
from servekit.fit.memory import GIB, drafter_gib, sampler_gib, uses_drafter

FACTS = ModelFacts(source="test", hidden_size=4096, intermediate_size=14336, vocab_size=128_256,
                   num_attention_heads=32, num_kv_heads=8, head_dim=128, layers=("full",) * 32)
H100 = device_from_profile("h100", {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 1, "vram_gb": 80})


def _launch(extra: str = ""):
    return launch_settings(shlex.split("--max-num-seqs 256 " + extra))


@pytest.mark.parametrize("method,drafts", [("mtp", True), ("eagle3", True), ("ngram", False), ("suffix", False)])
def test_only_draft_networks_add_the_drafter_pass(method, drafts):
    launch = _launch(f"""--speculative-config '{{"method": "{method}", "num_speculative_tokens": 2}}'""")
    assert uses_drafter(launch) is drafts
    expected = 8192 * 4096 * value("drafter_hidden_rows") * 2 / GIB if drafts else 0.0
    assert drafter_gib(FACTS, launch, 8192) == pytest.approx(expected)


def test_no_speculative_decoding_no_drafter_pass():
    assert drafter_gib(FACTS, _launch(), 8192) == 0.0


def test_rejection_sampler_pass_is_larger_than_the_plain_sampler_pass():
    plain = sampler_gib(FACTS, _launch(), H100, "0.32.0")
    spec = sampler_gib(FACTS, _launch("""--speculative-config '{"method": "mtp", "num_speculative_tokens": 1}'"""),
                       H100, "0.32.0")
    assert plain == pytest.approx(256 * 128_256 * value("sampler_bytes_per_logit_triton") / GIB)
    assert spec == pytest.approx(256 * 128_256 * value("rejection_sampler_bytes_per_logit") / GIB)
