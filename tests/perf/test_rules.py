"""The speed model's rules, on hand-built launches (no device needed: the rules are arithmetic)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from servekit.perf.predict import Limits, NoRoom, PerfLaunch, Spec, Workload, predict
from servekit.perf.shape import ModelShape, touched_fraction
from servekit.perf.terms import Layout, Rates, expert_touched, step_terms, weight_bytes_split

DENSE = ModelShape(params_total=8e9, params_active=8e9, expert_params=0.0, experts=0, experts_per_token=0,
                   layers=32, hidden=4096, heads=32, attention_dim=256, kv_bytes_per_token=131072.0,
                   weights_format="bf16")
MOE = replace(DENSE, params_total=30e9, params_active=3e9, expert_params=28e9, experts=128, experts_per_token=8)
QUIET = Rates(memory=2e12, flops=1e18, link=4e11, layer_s=0.0, step_s=0.0)
"""Huge FLOPs and no overheads: decode at batch 1 is bound by weight bandwidth alone."""
ROOMY = Limits(max_num_seqs=256, max_num_batched_tokens=8192, kv_tokens=None)
ONE = Workload(input_len=128, output_len=512, concurrency=1)


def _launch(**kw) -> PerfLaunch:
    return PerfLaunch(**{"shape": DENSE, "layout": Layout(), "rates": QUIET, "limits": ROOMY, **kw})


def test_doubled_bandwidth_halves_weight_bound_tpot():
    slow = predict(_launch(), ONE)
    fast = predict(_launch(rates=replace(QUIET, memory=QUIET.memory * 2)), ONE)
    assert slow.binding == "weight bandwidth"
    assert fast.tpot_ms == pytest.approx(slow.tpot_ms / 2, rel=1e-3)


def test_weight_bound_tpot_is_weight_bytes_over_bandwidth():
    pred = predict(_launch(), ONE)
    weights_s = 8e9 * 2 / QUIET.memory
    assert pred.terms_ms["weights"] == pytest.approx(weights_s * 1e3, rel=1e-9)
    assert pred.tpot_ms == pytest.approx(weights_s * 1e3, rel=0.02)  # plus the KV read and one prefill


def test_more_tp_lowers_weight_bound_tpot_but_adds_communication():
    tp1 = step_terms(DENSE, Layout(tp=1), QUIET, tokens=1, seqs=1, context=256)
    tp2 = step_terms(DENSE, Layout(tp=2), QUIET, tokens=1, seqs=1, context=256)
    assert tp2.weights == pytest.approx(tp1.weights / 2)
    assert tp1.communication == 0 and tp2.communication > 0
    assert predict(_launch(layout=Layout(tp=2)), ONE).tpot_ms < predict(_launch(), ONE).tpot_ms


def test_all_reduce_latency_adds_per_layer():
    base = step_terms(DENSE, Layout(tp=2), QUIET, tokens=1, seqs=1, context=1)
    slow = step_terms(DENSE, Layout(tp=2), replace(QUIET, allreduce_s=1e-5), tokens=1, seqs=1, context=1)
    assert slow.communication - base.communication == pytest.approx(2 * DENSE.layers * 1e-5)


def test_activation_traffic_grows_with_tokens_and_splits_over_tp_but_the_norms():
    """Each token moves 9 hidden-sized vectors per layer on every rank and 32 split over TP
    (``terms.ACTIVATION_PASSES_*``); off unless the rates count it (the CPU backend's do not)."""
    counted = replace(QUIET, activations=True)
    one = step_terms(DENSE, Layout(), counted, tokens=1000, seqs=1, context=1)
    two = step_terms(DENSE, Layout(), counted, tokens=2000, seqs=1, context=1)
    per_token_layer = DENSE.hidden * 2 * (9 + 32)
    assert one.activations == pytest.approx(1000 * DENSE.layers * per_token_layer / counted.memory)
    assert two.activations == pytest.approx(2 * one.activations)
    tp4 = step_terms(DENSE, Layout(tp=4), counted, tokens=1000, seqs=1, context=1)
    assert tp4.activations == pytest.approx(one.activations * (9 + 32 / 4) / (9 + 32))
    assert step_terms(DENSE, Layout(), QUIET, tokens=1000, seqs=1, context=1).activations == 0.0
    assert one.total == pytest.approx(max(one.weights + one.kv + one.activations, one.compute) + one.overhead)


def test_a_per_token_layer_cost_adds_beside_the_products_and_splits_over_pp():
    """The CPU backend's work outside the products (``Rates.token_s``) is paid per token and layer
    of the stage, after ``max(memory, compute)``: a CPU runs it beside the products."""
    costed = replace(QUIET, token_s=1e-6)
    one = step_terms(DENSE, Layout(), costed, tokens=1000, seqs=1, context=1)
    base = step_terms(DENSE, Layout(), QUIET, tokens=1000, seqs=1, context=1)
    assert one.overhead - base.overhead == pytest.approx(1000 * DENSE.layers * 1e-6)
    assert one.total - base.total == pytest.approx(1000 * DENSE.layers * 1e-6)
    two = step_terms(DENSE, Layout(), costed, tokens=2000, seqs=1, context=1)
    assert two.overhead - base.overhead == pytest.approx(2 * (one.overhead - base.overhead))
    stage = step_terms(DENSE, Layout(pp=2), costed, tokens=1000, seqs=1, context=1)
    assert stage.overhead == pytest.approx(1000 * DENSE.layers / 2 * 1e-6)


def test_a_cpu_prefill_is_the_probes_product_rate_plus_the_per_token_cost():
    """On the CPU backend a prompt's projections run at the probe's rate whole
    (``flops_fraction.vllm_cpu`` = 1: the probe runs the server's kernel) and the rest of its work
    is the per-token cost: a CPU with half the product rate takes twice the products' time and
    the same per-token time."""
    from servekit.perf.constants import constant

    assert constant("flops_fraction.vllm_cpu") == 1.0
    fast = replace(QUIET, flops=2e12, token_s=2e-6)
    slow = replace(fast, flops=1e12)
    a = step_terms(DENSE, Layout(), fast, tokens=4096, seqs=0, context=1, prefill_tokens=4096,
                   prefill_context=2048)
    b = step_terms(DENSE, Layout(), slow, tokens=4096, seqs=0, context=1, prefill_tokens=4096,
                   prefill_context=2048)
    assert b.compute == pytest.approx(2 * a.compute) and b.overhead == pytest.approx(a.overhead)


def test_compute_bound_prefill_grows_with_input():
    slow_flops = replace(QUIET, flops=1e14)
    short = step_terms(DENSE, Layout(), slow_flops, tokens=2048, seqs=0, context=1024)
    long = step_terms(DENSE, Layout(), slow_flops, tokens=4096, seqs=0, context=1024)
    assert short.binding == "compute" and long.compute == pytest.approx(2 * short.compute)


def test_kv_bytes_read_grow_with_context_and_batch():
    few = step_terms(DENSE, Layout(), QUIET, tokens=8, seqs=8, context=1000)
    many = step_terms(DENSE, Layout(), QUIET, tokens=16, seqs=16, context=2000)
    assert many.kv == pytest.approx(4 * few.kv)


def test_moe_reads_more_experts_as_the_batch_grows():
    assert touched_fraction(1, 128, 8) == pytest.approx(8 / 128)
    assert touched_fraction(64, 128, 8) > touched_fraction(8, 128, 8) > touched_fraction(1, 128, 8)
    one = step_terms(MOE, Layout(), QUIET, tokens=1, seqs=1, context=256)
    wide = step_terms(MOE, Layout(), QUIET, tokens=256, seqs=256, context=256)
    assert wide.weights > 5 * one.weights


def test_pool_and_scheduler_limits_bind():
    wl = Workload(input_len=1000, output_len=1000, concurrency=64)
    pool = predict(_launch(limits=Limits(256, 8192, kv_tokens=20_000)), wl)
    assert pool.batch == 13 and pool.binding == "KV pool"  # 20,000 / (1,000 + 1,000 / 2) on average
    seqs = predict(_launch(limits=Limits(16, 8192, kv_tokens=None)), wl)
    assert seqs.batch == 16 and seqs.binding == "scheduler limit"
    assert pool.ttft_ms > predict(_launch(), Workload(1000, 1000, concurrency=10)).ttft_ms  # queued


def test_a_pool_smaller_than_one_request_is_refused():
    with pytest.raises(NoRoom, match="cannot hold one request"):
        predict(_launch(limits=Limits(256, 8192, kv_tokens=500)), ONE)


def test_speculative_tokens_per_step():
    assert Spec("mtp", 3, 0.0).tau == 1
    assert Spec("mtp", 3, 1.0).tau == 4
    assert Spec("mtp", 1, 0.5).tau == pytest.approx(1.5)
    plain = predict(_launch(), ONE)
    spec = predict(_launch(spec=Spec("mtp", 2, 0.8)), ONE)
    assert spec.tpot_ms < plain.tpot_ms


def test_request_rate_below_capacity_serves_it_all_and_above_queues():
    light = predict(_launch(), Workload(128, 512, request_rate=0.5, num_prompts=100))
    assert light.output_throughput_tok_s == pytest.approx(0.5 * 512)
    heavy = predict(_launch(limits=Limits(4, 8192, None)), Workload(128, 512, request_rate=1000.0, num_prompts=1000))
    assert heavy.binding == "scheduler limit" and heavy.batch == 4
    assert heavy.ttft_ms > 100 * light.ttft_ms


def test_concurrency_raises_throughput_until_the_limit():
    low = predict(_launch(), Workload(128, 512, concurrency=1)).output_throughput_tok_s
    high = predict(_launch(), Workload(128, 512, concurrency=32)).output_throughput_tok_s
    capped = predict(_launch(limits=Limits(32, 8192, None)), Workload(128, 512, concurrency=64))
    assert high > 10 * low
    assert capped.output_throughput_tok_s == pytest.approx(high, rel=1e-6)


def test_replicas_add_throughput():
    one = predict(_launch(), Workload(128, 512, concurrency=64))
    two = predict(_launch(replicas=2), Workload(128, 512, concurrency=128))
    assert two.output_throughput_tok_s == pytest.approx(2 * one.output_throughput_tok_s)
    assert two.devices == 2 and two.per_device_tok_s == pytest.approx(one.per_device_tok_s)


def test_expert_parallel_replicas_split_the_experts():
    plain = step_terms(MOE, Layout(tp=1), QUIET, tokens=1, seqs=1, context=256)
    shared = step_terms(MOE, Layout(tp=1, expert_replicas=8), QUIET, tokens=1, seqs=1, context=256)
    assert shared.weights < plain.weights
    assert shared.weights > MOE.dense_bytes / QUIET.memory  # every replica still reads its dense part


def test_a_request_rate_under_a_client_concurrency_cap():
    capped = predict(_launch(), Workload(128, 512, concurrency=2, request_rate=1000.0, num_prompts=100))
    assert capped.batch == 2 and capped.binding == "client concurrency"


MLA = replace(MOE, attention_dim=320, decode_attention_dim=1088, heads=128)


def test_mla_decode_attends_at_the_absorbed_width():
    slow = replace(QUIET, flops=1e14)
    plain = step_terms(replace(MLA, decode_attention_dim=0), Layout(), slow, tokens=64, seqs=64, context=4096)
    absorbed = step_terms(MLA, Layout(), slow, tokens=64, seqs=64, context=4096)
    attention = 2 * MLA.layers * MLA.heads * (1088 - 320) * 4096 * 64 / slow.flops
    assert absorbed.compute - plain.compute == pytest.approx(attention, rel=1e-9)


def test_mla_decode_costs_a_fixed_time_per_sequence_and_layer_on_each_rank_that_holds_it():
    rates = replace(QUIET, mla_seq_s=2e-6)
    plain = step_terms(DENSE, Layout(tp=8), rates, tokens=300, seqs=300, context=512)
    assert plain.overhead == 0.0  # a model that does not decode a latent pays nothing
    tp = step_terms(MLA, Layout(tp=8), rates, tokens=300, seqs=300, context=512)
    assert tp.overhead == pytest.approx(300 * MLA.layers * 2e-6)
    # data-parallel attention inside the TP group: each rank holds 1/8 of the sequences' latents
    dp = step_terms(MLA, Layout(tp=8, attention_dp=8), rates, tokens=300, seqs=300, context=512)
    assert dp.overhead == pytest.approx(tp.overhead / 8)
    assert dp.kv == pytest.approx(tp.kv / 8)
    half = step_terms(MLA, Layout(tp=8, pp=2), rates, tokens=300, seqs=300, context=512)
    assert half.overhead == pytest.approx(tp.overhead / 2)  # a stage runs half the layers


def test_a_sequence_costs_a_fixed_time_per_layer_on_gpus_and_mla_pays_its_own_instead(profiles):
    """``seq_layer_us``: each running sequence costs the same time in each layer of a stage,
    whatever its context or the step's prompt tokens; an MLA model pays ``mla_seq_layer_us`` in
    its place (the CPU backend prices its work per token instead: ``test_cpu_rules``)."""
    from servekit.perf.constants import fitted_values
    from servekit.perf.launch import rates_for

    rates = replace(QUIET, seq_layer_s=1e-6)
    one = step_terms(DENSE, Layout(), rates, tokens=64, seqs=64, context=512)
    assert one.overhead == pytest.approx(64 * DENSE.layers * 1e-6)
    longer = step_terms(DENSE, Layout(), rates, tokens=64 + 2048, seqs=64, context=8192, prefill_tokens=2048)
    assert longer.overhead == pytest.approx(one.overhead)  # per sequence, not per token or per byte
    assert step_terms(DENSE, Layout(pp=2), rates, tokens=64, seqs=64, context=512).overhead == pytest.approx(one.overhead / 2)
    assert step_terms(MLA, Layout(), rates, tokens=64, seqs=64, context=512).overhead == 0.0
    v = fitted_values()
    assert v["seq_layer_us"] > 0
    assert rates_for(profiles["h200"], DENSE, "vllm").seq_layer_s == pytest.approx(v["seq_layer_us"] * 1e-6)


def test_a_prompt_token_attends_half_its_prompt():
    slow = replace(QUIET, flops=1e14)
    decode = step_terms(DENSE, Layout(), slow, tokens=2048, seqs=0, context=2048)
    prompt = step_terms(DENSE, Layout(), slow, tokens=2048, seqs=0, context=2048, prefill_tokens=2048,
                        prefill_context=1024)
    attention = 2 * DENSE.layers * DENSE.heads * DENSE.attention_dim * 1024 * 2048 / slow.flops
    assert decode.compute - prompt.compute == pytest.approx(attention, rel=1e-9)


def test_more_experts_touched_raise_tpot():
    few = predict(_launch(shape=MOE), Workload(128, 512, concurrency=1))
    many = predict(_launch(shape=MOE), Workload(128, 512, concurrency=16))
    wide = predict(_launch(shape=replace(MOE, experts_per_token=32)), Workload(128, 512, concurrency=16))
    assert many.tpot_ms > few.tpot_ms and wide.tpot_ms > many.tpot_ms


def test_request_overhead_adds_to_ttft_only():
    base = predict(_launch(), ONE)
    slow = predict(_launch(rates=replace(QUIET, request_s=0.03)), ONE)
    assert slow.ttft_ms - base.ttft_ms == pytest.approx(30.0, rel=1e-6)
    assert slow.tpot_ms == pytest.approx(base.tpot_ms)


def test_a_scheduler_that_reads_new_requests_every_r_steps_holds_them_half_of_r_minus_one_steps():
    wl = Workload(input_len=512, output_len=512, concurrency=16)
    every = predict(_launch(rates=replace(QUIET, step_s=0.01)), wl)
    sparse = predict(_launch(rates=replace(QUIET, step_s=0.01), limits=replace(ROOMY, read_every=31)), wl)
    step_ms = every.tpot_ms  # one decode step per output token here
    assert sparse.ttft_ms - every.ttft_ms == pytest.approx(15 * step_ms, rel=0.02)
    assert sparse.ttft_p99_ms - every.ttft_p99_ms == pytest.approx(30 * step_ms, rel=0.02)
    assert sparse.tpot_ms == every.tpot_ms
    assert sparse.output_throughput_tok_s == every.output_throughput_tok_s


def test_a_scheduler_that_allocates_as_it_writes_holds_more_requests():
    wl = Workload(input_len=1000, output_len=1000, concurrency=64)
    reserving = predict(_launch(limits=Limits(256, 8192, kv_tokens=20_000, reserves_output=True)), wl)
    growing = predict(_launch(limits=Limits(256, 8192, kv_tokens=20_000)), wl)
    assert reserving.batch == 10 and growing.batch == 13  # 20,000 / (1,000 + 1,000 / 2)
    with pytest.raises(NoRoom):  # one whole request must still fit
        predict(_launch(limits=Limits(256, 8192, kv_tokens=1500)), wl)


def test_drafting_reads_the_output_head():
    spec = Spec("eagle3", 4, 0.75)
    headless = predict(_launch(spec=spec), ONE)
    headed = predict(_launch(shape=replace(DENSE, vocab=150_000), spec=spec), ONE)
    head_s = 150_000 * DENSE.hidden * 2 / QUIET.memory
    assert headed.tpot_ms > headless.tpot_ms
    per_step = (headed.tpot_ms - headless.tpot_ms) * spec.tau  # ms more per step
    assert per_step == pytest.approx(4 * head_s * 1e3, rel=0.05)


SLOW_FLOPS = replace(QUIET, flops=2e14, step_s=1e-3)
"""Prefill is compute bound here, so a wave's prompts cost in proportion to their tokens."""


def test_a_fixed_length_closed_loop_runs_in_waves():
    loop = Workload(input_len=256, output_len=128, concurrency=4)
    waves = predict(_launch(rates=SLOW_FLOPS), replace(loop, fixed_lengths=True))
    spread = predict(_launch(rates=SLOW_FLOPS), loop)
    # the wave's first prompt is prefilled alone, the other three together in the next step, which
    # the median request waits for; a lone decode step of the four sequences is its TPOT
    alone = step_terms(DENSE, Layout(), SLOW_FLOPS, tokens=256, seqs=1, context=256, prefill_tokens=256,
                       prefill_context=128).total
    others = step_terms(DENSE, Layout(), SLOW_FLOPS, tokens=3 * 256 + 1, seqs=4, context=256,
                        prefill_tokens=3 * 256, prefill_context=128).total
    decode = step_terms(DENSE, Layout(), SLOW_FLOPS, tokens=4, seqs=4, context=256 + 64).total
    assert waves.ttft_ms == pytest.approx((alone + others) * 1e3)
    assert waves.tpot_ms == pytest.approx(decode * 1e3)
    assert waves.tpot_p99_ms == pytest.approx((decode + others / 127) * 1e3)
    assert waves.output_throughput_tok_s == pytest.approx(4 * 128 / (alone + others + 127 * decode))
    assert waves.ttft_ms > spread.ttft_ms and waves.tpot_ms <= spread.tpot_ms
    assert (waves.regime, spread.regime) == ("waves of 4", "continuous")


def test_a_single_client_of_fixed_lengths_waits_for_nobody():
    one = predict(_launch(rates=SLOW_FLOPS), Workload(input_len=256, output_len=128, concurrency=1, fixed_lengths=True))
    alone = step_terms(DENSE, Layout(), SLOW_FLOPS, tokens=256, seqs=1, context=256, prefill_tokens=256,
                       prefill_context=128).total
    assert one.ttft_ms == one.ttft_p99_ms == pytest.approx(alone * 1e3)
    assert one.tpot_ms == one.tpot_p99_ms


def test_waves_need_prompts_that_fit_one_step_and_a_loop_the_scheduler_runs_whole():
    wide = Workload(input_len=10000, output_len=128, concurrency=4, fixed_lengths=True)  # one prompt fills >1 step
    assert predict(_launch(), wide) == predict(_launch(), replace(wide, fixed_lengths=False))
    capped = Workload(input_len=256, output_len=128, concurrency=8, fixed_lengths=True)
    few = _launch(limits=replace(ROOMY, max_num_seqs=4))
    assert predict(few, capped) == predict(few, replace(capped, fixed_lengths=False))
    rate = Workload(input_len=256, output_len=128, request_rate=2.0, fixed_lengths=True)
    assert predict(_launch(), rate) == predict(_launch(), replace(rate, fixed_lengths=False))


def _step(tokens: float, seqs: int, context: float, prefill: float = 0.0, prompt: int = 0) -> float:
    return step_terms(DENSE, Layout(), SLOW_FLOPS, tokens=tokens, seqs=seqs, context=context, prefill_tokens=prefill,
                      prefill_context=prompt / 2).total


def test_a_closed_loop_whose_prompts_overflow_a_step_runs_in_cohorts():
    """16 clients of 1024-token prompts under an 8192-token budget: a step holds 7 whole prompts
    beside the other 9 requests' decodes (7 x 1024 + 9 <= 8192), so the requests run in cohorts,
    replayed as the scheduler takes them; the prompts wait for each other's prefill steps, which
    the continuous rule (one prompt beside the decodes) does not see."""
    loop = Workload(input_len=1024, output_len=64, concurrency=16, fixed_lengths=True)
    got = predict(_launch(rates=SLOW_FLOPS), loop)
    spread = predict(_launch(rates=SLOW_FLOPS), replace(loop, fixed_lengths=False))
    prefill = _step(7 * 1024 + 9, 16, 1024 + 32, 7 * 1024, 1024)
    decode = _step(16, 16, 1024 + 32)
    assert got.ttft_ms > 3 * spread.ttft_ms and got.ttft_ms >= prefill * 1e3
    assert decode * 1e3 < got.tpot_ms < prefill * 1e3
    assert got.ttft_p99_ms >= got.ttft_ms and got.tpot_p99_ms >= got.tpot_ms
    assert (got.regime, spread.regime) == ("cohorts of 7", "continuous")


STEP_MS = replace(QUIET, flops=1e30, memory=1e30, link=1e30, step_s=1e-3)
"""Every step takes 1 ms whatever it carries: a replay's times count its steps."""


def test_a_replayed_loop_takes_prompts_in_chunks_of_what_the_budget_leaves():
    """3 clients of 100-token prompts and 2-token outputs under a 150-token budget, by hand:
    step 1 prefills the first prompt alone (the others reach the engine during it); step 2 decodes
    the first request's last token, prefills the second prompt and 49 tokens of the third; step 3
    decodes the second's last token and prefills the third's other 51; step 4 decodes the third's."""
    launch = _launch(rates=STEP_MS, limits=replace(ROOMY, max_num_batched_tokens=150))
    got = predict(launch, Workload(input_len=100, output_len=2, concurrency=3, num_prompts=3, fixed_lengths=True))
    assert got.regime == "cohorts of 1"
    assert got.ttft_ms == pytest.approx(2.0)  # first tokens at 1, 2 and 3 ms
    assert got.ttft_p99_ms == pytest.approx(1 + 0.99 * 2)
    assert got.tpot_ms == pytest.approx(1.0)
    assert got.output_throughput_tok_s == pytest.approx(3 * 2 / 4e-3)


def test_a_replayed_loop_of_waves_is_the_waves_rule():
    """The replay takes a loop whose prompts fit one step as the waves rule prices it: the first
    prompt alone, the rest together in the next step, then the wave's decodes. (A request reaches
    the engine a little after its client sends it, as every real one does: here 0.1 ms, which the
    replay overlaps with the engine's step and the waves rule adds.)"""
    from servekit.perf.predict import _closed_loop, _waves

    launch = _launch(rates=replace(SLOW_FLOPS, request_s=1e-4))
    loop = Workload(input_len=256, output_len=128, concurrency=4, num_prompts=40, fixed_lengths=True)
    waves, replayed = _waves(launch, loop, 4), _closed_loop(launch, loop, 4)
    assert replayed.ttft_ms == pytest.approx(waves.ttft_ms, rel=0.01)
    assert replayed.tpot_ms == pytest.approx(waves.tpot_ms, rel=0.02)
    assert replayed.output_throughput_tok_s == pytest.approx(waves.output_throughput_tok_s, rel=0.02)


def test_cohorts_take_a_bigger_budget_as_bigger_and_fewer_cohorts():
    loop = Workload(input_len=1024, output_len=64, concurrency=32, fixed_lengths=True)
    small = predict(_launch(rates=SLOW_FLOPS), loop)
    large = predict(_launch(rates=SLOW_FLOPS, limits=replace(ROOMY, max_num_batched_tokens=16384)), loop)
    assert large.ttft_ms > small.ttft_ms  # each prefill step carries twice the prompts
    fits = predict(_launch(rates=SLOW_FLOPS, limits=replace(ROOMY, max_num_batched_tokens=32768)), loop)
    # all 32 prompts fit one step: the waves rule (the first prompt alone, the other 31 together)
    alone = _step(1024, 1, 1024, 1024, 1024)
    others = _step(31 * 1024 + 1, 32, 1024, 31 * 1024, 1024)
    assert fits.ttft_ms == pytest.approx((alone + others) * 1e3)


OFFLINE = Workload(input_len=2048, output_len=256, num_prompts=1000)
"""Every prompt at once: the median request is the 500th, admitted after the 500 prompts ahead of it."""


def _offline(occupancy: float):
    return predict(_launch(rates=SLOW_FLOPS, limits=Limits(1000, 8192, None), occupancy=occupancy), OFFLINE)


@pytest.mark.parametrize("occupancy", [0.45, 0.5, 0.55])
def test_an_offline_request_waits_at_least_for_the_prompts_ahead_of_it(occupancy):
    everyone = _offline(1.0)  # every prompt runs at once: the median waits for the prefills queued ahead alone
    got = _offline(occupancy)
    assert everyone.batch == 1000 and got.batch == round(1000 * occupancy)
    # below, at and above the median's position the running batch changes which wait binds, never
    # the floor (the queued prefill steps run beside at most 500 decodes in every case)
    assert got.ttft_ms >= 0.95 * everyone.ttft_ms


def test_an_offline_median_does_not_jump_where_the_batch_passes_it():
    ttft = [_offline(share / 100).ttft_ms for share in range(46, 55)]
    assert max(ttft) < 1.5 * min(ttft)


def test_an_offline_run_of_fixed_lengths_runs_every_prompt_the_scheduler_admits():
    """Requests of the same lengths start together and end together: no fitted occupancy (that is
    for a dataset's lengths, which finish apart), and none of them waits for a slot."""
    launch = _launch(rates=SLOW_FLOPS, occupancy=0.35)
    few = Workload(input_len=128, output_len=128, num_prompts=4)
    fixed, spread = predict(launch, replace(few, fixed_lengths=True)), predict(launch, few)
    assert fixed.batch == 4 and spread.batch == 1
    assert fixed.output_throughput_tok_s > 3 * spread.output_throughput_tok_s
    closed = predict(launch, Workload(input_len=128, output_len=128, concurrency=4))
    assert fixed.tpot_ms == pytest.approx(closed.tpot_ms, rel=0.05)
    many = predict(launch, Workload(input_len=128, output_len=128, num_prompts=1000, fixed_lengths=True))
    assert many.batch == ROOMY.max_num_seqs  # the scheduler's cap still binds


def test_an_offline_burst_names_a_cap_as_binding_only_when_the_cap_holds_it():
    """A dataset's burst runs its fitted share of the prompts; when no cap is reached the step's own
    term binds (raising max-num-seqs would not help), and when the cap is reached the cap binds."""
    share = _offline(0.5)  # 500 of 1,000 prompts running, the scheduler admits 1,000
    assert share.batch == 500 and share.binding not in {"scheduler limit", "KV pool"}
    capped = predict(_launch(rates=SLOW_FLOPS, limits=Limits(256, 8192, None), occupancy=0.5), OFFLINE)
    assert capped.batch == 256 and capped.binding == "scheduler limit"


def test_a_few_offline_prompts_wait_for_a_step_of_their_own_tokens_not_a_full_one():
    """The 4 x 128 prompt tokens of a small offline run fill a step of 512 tokens, not of the
    budget's 8192: their TTFT is that step's, as a closed loop of 4 has it."""
    launch = _launch(rates=SLOW_FLOPS)
    offline = predict(launch, Workload(input_len=128, output_len=128, num_prompts=4, fixed_lengths=True))
    full = predict(launch, Workload(input_len=2048, output_len=128, num_prompts=4, fixed_lengths=True))
    assert offline.ttft_ms < full.ttft_ms / 8
    closed = predict(launch, Workload(input_len=128, output_len=128, concurrency=4, fixed_lengths=True))
    assert offline.ttft_ms <= closed.ttft_ms * 1.05


def test_routed_experts_stream_at_their_own_rate_and_dense_weights_do_not():
    """Expert bytes over ``expert_memory``, dense bytes over ``memory``: halving the experts' rate
    doubles their share of the weight time and leaves a dense model's alone."""
    dense_bytes, expert_bytes = weight_bytes_split(MOE, Layout(), 4)
    assert dense_bytes == MOE.streamed_dense_bytes
    assert expert_bytes == pytest.approx(MOE.expert_bytes * expert_touched(MOE, Layout(), 4))
    base = step_terms(MOE, Layout(), QUIET, tokens=4, seqs=4, context=1)
    slow = step_terms(MOE, Layout(), replace(QUIET, expert_memory=QUIET.memory / 2), tokens=4, seqs=4, context=1)
    assert slow.weights - base.weights == pytest.approx(expert_bytes / QUIET.memory)
    dense = step_terms(DENSE, Layout(), QUIET, tokens=4, seqs=4, context=1)
    assert step_terms(DENSE, Layout(), replace(QUIET, expert_memory=1.0), tokens=4, seqs=4, context=1) == dense


def test_gpu_rates_stream_experts_at_the_measured_grouped_share():
    """``moe_bandwidth_share`` (sourced from the H200 probe) scales a GPU's expert rate; a measured
    CPU row's fitted share already stands for everything it streams."""
    from servekit.app.request import load_documents
    from servekit.hardware import profiles_for
    from servekit.perf.constants import constant
    from servekit.perf.launch import rates_for

    h200 = profiles_for(load_documents(None).taxonomy)["h200"]
    rates = rates_for(h200, MOE, "vllm")
    assert rates.expert_memory == pytest.approx(rates.memory * constant("moe_bandwidth_share"))


def test_fp4_experts_on_a_part_with_an_fp4_rate_stream_at_their_own_share(profiles):
    """Experts in a 4-bit format run the engines' FP4 kernels on a part with an FP4 rate (B200,
    MI355X: ``moe_bandwidth_share.fp4``); the same checkpoint on a part without one (H200), and
    FP8 experts on B200, take the share the H200 probe measured."""
    from servekit.perf.constants import constant, fitted_values
    from servekit.perf.launch import expert_stream_share, rates_for

    v = fitted_values()
    fp4 = replace(MOE, weights_format="mxfp4")
    for part in ("b200", "mi355x"):
        rates = rates_for(profiles[part], fp4, "vllm")
        assert rates.expert_memory == pytest.approx(rates.memory * v["moe_bandwidth_share.fp4"])
    for part, shape in (("h200", fp4), ("b200", replace(MOE, weights_format="fp8"))):
        rates = rates_for(profiles[part], shape, "vllm")
        assert rates.expert_memory == pytest.approx(rates.memory * constant("moe_bandwidth_share"))
    halved = rates_for(profiles["b200"], fp4, "vllm", values={"moe_bandwidth_share.fp4": 0.5})
    assert halved.expert_memory * 2 == pytest.approx(rates_for(profiles["b200"], fp4, "vllm",
                                                                values={"moe_bandwidth_share.fp4": 1.0}).expert_memory)
    assert expert_stream_share(v, "fp4") == v["moe_bandwidth_share.fp4"] <= 1.0
    assert expert_stream_share(v, "bf16") == constant("moe_bandwidth_share")


def test_achieved_rates_name_the_experts_rate_for_a_moe_model_only():
    from servekit.app.perf import achieved_rates

    moe = achieved_rates(_launch(shape=MOE, rates=replace(QUIET, expert_memory=1.5e12)))
    assert moe["expert_memory_gb_s"] == pytest.approx(1500) and moe["memory_gb_s"] == pytest.approx(2000)
    assert "expert_memory_gb_s" not in achieved_rates(_launch())


def test_an_untied_input_embedding_is_looked_up_not_streamed():
    """A step gathers its tokens' rows of an untied input table: its bytes leave the weight read;
    the checkpoint's total keeps them."""
    untied = replace(DENSE, vocab=128000, embedding_params=128000 * 4096.0)
    base = step_terms(DENSE, Layout(), QUIET, tokens=1, seqs=1, context=1)
    lighter = step_terms(untied, Layout(), QUIET, tokens=1, seqs=1, context=1)
    assert base.weights - lighter.weights == pytest.approx(128000 * 4096 * 2 / QUIET.memory)
    assert untied.weight_bytes == DENSE.weight_bytes


def test_points_read_the_tie_flag_for_the_embedding():
    from servekit.perf.points import shape_facts

    facts = {"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 128256,
             "params_total_b": 8.0}
    point = {"config_facts": facts, "weights_precision": "bf16"}
    untied = shape_facts({**point, "config_facts": {**facts, "tie_word_embeddings": False}})
    assert untied.embedding_params == 128256 * 4096
    assert shape_facts(point).embedding_params == 0  # transformers' default ties the two
    assert shape_facts({**point, "config_facts": {**facts, "tie_word_embeddings": True}}).embedding_params == 0


def test_a_life_prices_its_prompt_steps_and_its_decode_steps_apart():
    """Four requests decode 128 steps and each prompt of 512 tokens is prefilled whole in one step
    beside the decodes: four steps carry a prompt, 124 decode alone, and the life is the sum of
    the two kinds (each its own max of memory and arithmetic), not 128 steps of the average tokens."""
    from servekit.perf.predict import _iteration, life

    slow_flops = replace(QUIET, flops=2e14)
    launch = _launch(rates=slow_flops)
    wl = Workload(input_len=512, output_len=128, concurrency=4)
    context = 512 + 128 / 2
    mixed, _ = _iteration(launch, 4 + 512, 4, context, 512, 512)
    alone, _ = _iteration(launch, 4, 4, context, 0, 512)
    got = life(launch, wl, 4)
    assert got.seconds == pytest.approx(4 * mixed + 124 * alone)
    assert got.iteration == pytest.approx(got.seconds / 128)
    average, _ = _iteration(launch, 4 + 4 * 512 / 128, 4, context, 4 * 512 / 128, 512)
    assert got.seconds > 128 * average  # the prompt steps are arithmetic-bound, the rest memory-bound


def test_a_moe_life_reads_the_experts_of_its_steps_not_of_an_average_step():
    """Each kind of step reads the experts its own tokens touch: the decode-only steps a few, the
    prompt steps nearly all (the touched share is concave in tokens)."""
    from servekit.perf.predict import life
    from servekit.perf.terms import weight_s

    launch = _launch(shape=MOE)
    wl = Workload(input_len=512, output_len=128, concurrency=4)
    got = life(launch, wl, 4)
    decoding = weight_s(MOE, Layout(), QUIET, 4)
    prompt = weight_s(MOE, Layout(), QUIET, 516)
    assert got.terms.weights == pytest.approx((124 * decoding + 4 * prompt) / 128)
    assert got.terms.weights < weight_s(MOE, Layout(), QUIET, 4 + 4 * 512 / 128)


def test_a_prompt_longer_than_the_budget_fills_every_step_with_a_chunk():
    """Prompts that outlast the decodes (every step carries prompt tokens) spread evenly over the
    steps: each step carries the average share, up to the budget."""
    from servekit.perf.predict import _iteration, life

    launch = _launch(shape=MOE, limits=replace(ROOMY, max_num_batched_tokens=1024))
    wl = Workload(input_len=4096, output_len=16, concurrency=24)
    got = life(launch, wl, 24)
    tokens = 24 * 4096 + 24 * 16
    steps = tokens / 1024
    step, _ = _iteration(launch, 1024, 24, 4096 + 8, 24 * 4096 / steps, 4096)
    assert got.seconds == pytest.approx(steps * step)
    assert got.tokens_per_iteration == pytest.approx(1024)


def test_host_work_beside_the_device_makes_a_step_the_longer_of_the_two():
    """With the engine scheduling a step ahead (vLLM's async scheduling), a step's host work (per
    step and per sequence) overlaps the device's work: the step lasts the longer of the two, not
    their sum; the per-layer cost stays on the device's side."""
    host = replace(QUIET, step_s=1e-3, seq_s=1e-4, layer_s=1e-5)
    serial = step_terms(DENSE, Layout(), host, tokens=8, seqs=8, context=256)
    overlapped = step_terms(DENSE, Layout(), replace(host, overlap=True), tokens=8, seqs=8, context=256)
    device = max(serial.weights + serial.kv, serial.compute) + DENSE.layers * 1e-5
    assert serial.host == pytest.approx(1e-3 + 8 * 1e-4) and serial.overhead == pytest.approx(serial.host + 32e-5)
    assert serial.total == pytest.approx(device + serial.host)
    assert overlapped.total == pytest.approx(max(device, overlapped.host))
    busy = step_terms(DENSE, Layout(), replace(host, overlap=True, seq_s=1e-2), tokens=8, seqs=8, context=256)
    assert busy.total == pytest.approx(busy.host)  # the host is the longer: it sets the pace


def test_async_scheduling_is_vllms_from_0_14_on_gpus_and_off_where_vllm_turns_it_off(profiles):
    """vLLM 0.14.0 turned async scheduling on by default (vllm/config/scheduler.py); it stays off
    before, on the CPU platform, with pipeline parallelism, a draft method other than EAGLE or MTP,
    and across nodes (Ray's executor). SGLang's and TensorRT-LLM's overlap schedulers are on by
    default, except with pipeline stages or a draft method."""
    from servekit.perf.launch import overlaps_host_work

    h100, cpu = profiles["h100"], profiles["xeon6"]
    assert overlaps_host_work("vllm", "0.14.0", h100) and overlaps_host_work("vllm", None, h100)
    assert not overlaps_host_work("vllm", "0.13.0", h100)
    assert not overlaps_host_work("vllm", "0.14.0", cpu)
    assert not overlaps_host_work("vllm", "0.14.0", h100, pp=2)
    assert not overlaps_host_work("vllm", "0.14.0", h100, nodes=2)
    assert not overlaps_host_work("vllm", "0.14.0", h100, spec_method="ngram")
    assert overlaps_host_work("vllm", "0.14.0", h100, spec_method="eagle3")
    assert overlaps_host_work("vllm", "0.14.0", h100, spec_method="deepseek_mtp")
    assert overlaps_host_work("vllm", "0.20.0", profiles["mi300x"])
    assert overlaps_host_work("sglang", "0.5.5", h100) and overlaps_host_work("trtllm", "1.0", h100)
    assert not overlaps_host_work("sglang", "0.5.5", h100, pp=2)
    assert not overlaps_host_work("sglang", "0.5.5", h100, spec_method="eagle3")


def test_a_stated_async_scheduling_switch_wins_over_the_releases_default(profiles):
    """``--async-scheduling`` turns the overlap on before 0.14.0 and ``--no-async-scheduling`` off
    after it; what vLLM cannot overlap (pipeline stages, other engines, the CPU) stays serial."""
    from servekit.perf.launch import overlaps_host_work

    h100 = profiles["h100"]
    assert overlaps_host_work("vllm", "0.11.0", h100, stated=True)
    assert not overlaps_host_work("vllm", "0.14.0", h100, stated=False)
    assert overlaps_host_work("vllm", "0.14.0", h100, stated=None)
    assert not overlaps_host_work("vllm", "0.11.0", h100, pp=2, stated=True)
    assert not overlaps_host_work("vllm", "0.11.0", profiles["xeon6"], stated=True)
    assert not overlaps_host_work("sglang", "0.5.5", h100, pp=2, stated=True)


def test_attention_runs_at_its_own_rate_apart_from_the_linears():
    """Attention's products (scores and values) take ``attention_flops``: halving it doubles the
    attention part of a long prefill's arithmetic and leaves the linears' part as it was."""
    prompt = dict(tokens=4096, seqs=1, context=4096, prefill_tokens=4096, prefill_context=2048)
    fast = replace(QUIET, flops=1e15, attention_flops=1e15)
    slow = replace(fast, attention_flops=5e14)
    linears = 4096 * 2.0 * DENSE.params_active / 1e15
    attention = step_terms(DENSE, Layout(), fast, **prompt).compute - linears
    assert attention > 0
    assert step_terms(DENSE, Layout(), slow, **prompt).compute == pytest.approx(linears + 2 * attention)
    assert step_terms(DENSE, Layout(), replace(fast, attention_flops=0.0), **prompt).compute == \
        pytest.approx(step_terms(DENSE, Layout(), fast, **prompt).compute)  # 0: the linears' rate


def test_attention_takes_the_kv_caches_format_never_a_4_bit_one(profiles):
    """An FP4 checkpoint's attention runs at the FP8 rate over an FP8 cache and at the BF16 rate
    over a 16-bit one; an FP8 checkpoint over a BF16 cache attends at BF16; BF16 weights over an
    FP8 cache attend no faster than their linears."""
    from servekit.perf.launch import attention_format, rates_for

    assert attention_format("fp8_e4m3") == attention_format("fp8") == "fp8"
    assert attention_format("auto") == attention_format(None) == "bf16"
    b200 = profiles["b200"]
    fp4 = replace(DENSE, weights_format="nvfp4")
    fp8 = replace(DENSE, weights_format="fp8")
    from servekit.perf.constants import fitted_values

    v = fitted_values()
    share = v["flops_fraction"] * v["flops_scale.trtllm"]  # FP8 and BF16 products: the general share
    on_fp8 = rates_for(b200, fp4, "trtllm", kv_cache_dtype="fp8")
    on_bf16 = rates_for(b200, fp4, "trtllm", kv_cache_dtype="auto")
    assert on_fp8.flops == pytest.approx(9000e12 * v["flops_fraction.fp4"] * v["flops_scale.trtllm"])
    assert on_fp8.attention_flops == pytest.approx(min(on_fp8.flops, 4500e12 * share))  # FP8's 4.5 PFLOPS
    assert on_bf16.attention_flops == pytest.approx(min(on_fp8.flops, 2250e12 * share))  # BF16's 2.25
    assert on_bf16.attention_flops < on_fp8.attention_flops
    assert rates_for(b200, fp8, "vllm", kv_cache_dtype="auto").attention_flops == pytest.approx(
        rates_for(b200, fp8, "vllm").flops / 2)
    bf16 = rates_for(b200, DENSE, "vllm", kv_cache_dtype="fp8")
    assert bf16.attention_flops == pytest.approx(bf16.flops)


def test_fp4_products_take_their_own_share_and_other_formats_the_generations():
    from servekit.perf.constants import fitted_values, flops_fraction

    v = fitted_values()
    assert flops_fraction(v, "blackwell", "fp4") == v["flops_fraction.fp4"] < v["flops_fraction"]
    assert flops_fraction(v, "blackwell", "fp8") == flops_fraction(v, "hopper", "bf16") == v["flops_fraction"]
    assert flops_fraction(v, "ampere", "bf16") == v["flops_fraction.ampere"]
