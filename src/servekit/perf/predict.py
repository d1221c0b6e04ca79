"""A workload on a launch -> output tokens/s, TTFT and TPOT (median and p99) and what binds.

The running batch ``B`` is the demand (the concurrency; every prompt at once for an offline
run; Little's law for a request rate) capped by the scheduler (``max_num_seqs``) and by the KV
pool (``kv_tokens / (input + output)``: a sequence holds its whole context at its end).

One request's life, with ``B`` requests running: the engine takes ``S = max(output / tau,
tokens / max_num_batched_tokens)`` iterations, where ``tokens`` is everything the ``B`` slots
process meanwhile (each slot one prefill of ``input`` tokens and ``output`` decode tokens;
``tau`` the tokens a speculative step yields). Each iteration runs every pipeline stage once per
micro-batch (``PP`` stage steps of ``B / PP`` sequences, ``servekit.perf.terms``). The iterations
are of two kinds (``life``): those that carry a prompt beside the decodes (one per prompt where
the budget holds it whole) and those that decode alone, so the life lasts ``L = PP x (prompt
iterations x their stage step + the rest x a decode stage step)``; TPOT is ``L / output`` and the
throughput ``B x output / L`` per replica (DP replicas add up).

TTFT is the engine's fixed cost of taking a request in and streaming its first token back
(``Rates.request_s``), the prefill of ``input`` tokens in chunks beside the running decodes, half an
iteration of waiting for the running one (p99: a whole one), where the scheduler reads new requests
only every ``r`` steps (``Limits.read_every``) half of ``r - 1`` more (p99: all), and the queue:

* concurrency above ``B``: every request waits ``(C - B) / B x L`` (closed loop, steady state);
* offline (every prompt at once): ``B`` is at most the engine's fitted occupancy times ``N``
  when the lengths are a dataset's means (requests of varying lengths finish apart, and each engine
  admits in its own order), and ``N`` itself when every request has the same lengths (they start
  together and end together, ``Workload.fixed_lengths``); the request
  at position ``q x N`` waits for the prefills queued ahead of it (``qN`` prompts at
  ``max_num_batched_tokens`` a step) and, beyond the first ``B``, for a slot, ``(qN - B) / B x
  L``, whichever is longer: no request is admitted before the prompts ahead of it are
  (median q = 0.5, p99 q = 0.99);
* request rate ``R`` (with a client concurrency cap, ``B`` is at most that cap) below capacity: the M/D/1 wait (Pollaczek-Khinchine) rho / (2 (1 - rho))
  iterations, rho = R / capacity; above it the queue grows over the run: the median request waits
  ``N / 2 x (1 / capacity - 1 / R)``.

Lockstep (``Workload.fixed_lengths``: every request has the same prompt and output length, as
``vllm bench serve``'s random dataset makes them with ``--random-range-ratio 0``, its default, and
``--ignore-eos``): in a closed loop of ``C`` clients that the scheduler runs at once, and whose
``C x input`` prompt tokens fit one step's ``max_num_batched_tokens``, the requests run in waves:
they end in the same step and the clients send the next ``C`` at once. The engine steps as soon
as one request waits (vLLM's ``EngineCore.run_busy_loop`` leaves ``_process_input_queue`` once
it has work), so the wave's first request is prefilled alone, and the other ``C - 1``, which reach
the engine during that step, are prefilled together in the next one (servekit bench's loads on
the vLLM CPU server show it: each wave's requests start within a few milliseconds, one has a
short TTFT and the others one long one). The first request's TTFT is the request overhead and its
prefill, the others' that plus their prefill step; the first decodes through the others'
prefill step (its first inter-token gap carries it), the others decode ``output - 1`` steps of
``C`` sequences. The median over the requests is the others' figure when they are the majority
(``C`` > 2), the mean of both at ``C`` = 2; p99 is the larger one. The throughput is ``C x output`` over the wave.

Cohorts (the same closed loop when the ``C`` prompts do not fit one step, though one does beside
the other requests' decodes: ``k >= 1`` whole prompts with ``k x input + (C - k) <=
max_num_batched_tokens``): no closed form holds here, so the loop is replayed step by step as
vLLM's scheduler takes it (``servekit.perf.closed_loop``; ``Scheduler.schedule`` of V1): the running requests
first (a decode token each, or the rest of a chunked prompt), then the waiting ones in order of
arrival while the token budget lasts, each taking as much of its prompt as the budget leaves
(chunked prefill); a request reaches the engine the request overhead after its client sent it,
and its client sends the next when its last token comes. The figures are those of the replayed
requests, as ``vllm bench serve`` reports them: median and p99 TTFT from send to first token,
TPOT over each request's gaps, throughput over the run (at most ``closed_loop.SIMULATED_CYCLES``
cycles of the loop). The prompts that wait behind each other's prefill steps are what the continuous rule
misses. The replay takes a loop of waves as the waves rule prices it (a test holds the two
together); the waves rule stays its closed form. A prompt that does not fit one step beside the
decodes (chunked over several) is left to the continuous rule above.

Speculative decoding with ``k`` drafted tokens accepted at rate ``a`` yields ``tau = (1 - a^(k+1))
/ (1 - a)`` tokens per step (Leviathan et al., https://arxiv.org/abs/2211.17192, eq. 1), verifies
``k + 1`` tokens per sequence per step, and drafts with a one-layer head: each of the ``k`` draft
passes costs one layer of the target's step (an assumption for MTP and EAGLE heads) and a read of
the output head, ``vocab x hidden`` weights (``terms.lm_head_s``), which a one-layer head cannot
amortise as the target's many layers do.
"""

from __future__ import annotations

import math
from dataclasses import field

from servekit.perf.closed_loop import Loop, quantile, replay
from servekit.perf.shape import ModelShape
from servekit.perf.terms import Layout, Rates, StepTerms, blended, lm_head_s, step_terms
from servekit.records import record

RATE_ITERATIONS = 60
P99_PREFILLS = 2.0
"""The p99 TPOT is that of a request whose life meets twice the average prefills (a stated assumption)."""


@record
class Workload:
    input_len: int
    output_len: int
    concurrency: int | None = None
    request_rate: float | None = None
    num_prompts: int = 1000
    fixed_lengths: bool = False
    """Every request has exactly ``input_len`` prompt and ``output_len`` output tokens (a random
    dataset with no length spread, generating past EOS): closed loops of them run in lockstep."""

    @property
    def offline(self) -> bool:
        return self.concurrency is None and self.request_rate is None


@record
class Limits:
    max_num_seqs: int
    max_num_batched_tokens: int
    kv_tokens: int | None
    """Tokens of the KV pool of one replica (None: not known; the pool is not a limit)."""
    reserves_output: bool = False
    """Whether the scheduler reserves a request's whole output in the pool when it admits it
    (``launch.reserves_whole_output``); else the pool holds what the running requests have
    written so far."""
    read_every: int = 1
    """Decode steps between the scheduler's reads of new requests (SGLang's ``steps_between_reads``)."""


@record
class Spec:
    method: str
    tokens: int
    acceptance: float

    @property
    def tau(self) -> float:
        a, k = self.acceptance, self.tokens
        return float(k + 1) if a >= 1 else (1 - a ** (k + 1)) / (1 - a)


@record
class PerfLaunch:
    shape: ModelShape
    layout: Layout
    rates: Rates
    limits: Limits
    replicas: int = 1
    spec: Spec | None = None
    occupancy: float = 1.0
    """Share of an offline run's prompts running at once when the limits admit them all."""

    @property
    def devices(self) -> int:
        return self.layout.tp * self.layout.pp * self.replicas


@record
class Prediction:
    output_throughput_tok_s: float
    ttft_ms: float
    ttft_p99_ms: float
    tpot_ms: float
    tpot_p99_ms: float
    binding: str
    batch: int
    devices: int
    terms_ms: dict[str, float] = field(default_factory=dict)
    regime: str = "continuous"
    """How the requests run: ``continuous`` (each as it arrives), ``waves of N`` or ``cohorts of N``
    (a closed loop of fixed lengths: the module's text)."""

    @property
    def per_device_tok_s(self) -> float:
        return self.output_throughput_tok_s / self.devices


class NoRoom(ValueError):
    """The KV pool cannot hold one request of this workload."""


def batch_limit(launch: PerfLaunch, wl: Workload) -> tuple[int, str]:
    """(most sequences running at once, the limit that sets it). A scheduler that reserves each
    request's whole output fits ``pool / (input + output)`` requests; one that allocates as tokens
    are written (and preempts when the pool runs out) holds requests at every stage of their
    output at once, on average ``input + output / 2`` tokens each."""
    spec = launch.spec.tokens if launch.spec else 0
    per_seq = wl.input_len + wl.output_len + spec
    seqs = launch.limits.max_num_seqs
    if launch.limits.kv_tokens is not None:
        if launch.limits.kv_tokens < per_seq:
            raise NoRoom(f"the KV pool ({launch.limits.kv_tokens:,} tokens) cannot hold one request of "
                         f"{per_seq:,} tokens")
        held = per_seq if launch.limits.reserves_output else wl.input_len + wl.output_len / 2 + spec
        room = int(launch.limits.kv_tokens // held)
        if room < seqs:
            return room, "KV pool"
    return seqs, "scheduler limit"


@record
class Life:
    """One request's life with ``batch`` requests running."""

    seconds: float
    iteration: float
    terms: StepTerms
    tokens_per_iteration: float


def _iteration(launch: PerfLaunch, tokens: float, seqs: float, context: float, prefill_tokens: float,
               input_len: int) -> tuple[float, StepTerms]:
    """One iteration of ``tokens`` tokens, ``prefill_tokens`` of them from prompts of ``input_len``
    (each attending half its prompt on average: the causal mask)."""
    pp = launch.layout.pp
    terms = step_terms(launch.shape, launch.layout, launch.rates, tokens=tokens / pp, seqs=seqs / pp,
                       context=context, prefill_tokens=prefill_tokens / pp, prefill_context=input_len / 2)
    seconds = pp * terms.total
    if launch.spec:
        draft = seconds / launch.shape.layers + lm_head_s(launch.shape, launch.layout, launch.rates)
        seconds += launch.spec.tokens * draft
    return seconds, terms


def life(launch: PerfLaunch, wl: Workload, batch: int, prefills: float = 1.0) -> Life:
    """``prefills``: prefills per slot during the life (1 on average; ``P99_PREFILLS`` for a
    request that meets a burst of arrivals).

    A prompt is prefilled whole in one step where the token budget holds it beside the decodes (in
    chunks of the budget otherwise): ``prompt / chunk`` steps carry a chunk and the rest decode
    alone, each kind priced on its own (memory and arithmetic overlap inside a step, not across
    steps). Where every step carries prompt tokens, each carries the average share of them."""
    tau = launch.spec.tau if launch.spec else 1.0
    verify = launch.spec.tokens + 1 if launch.spec else 1
    decode_steps = max(1.0, wl.output_len / tau)
    decodes = batch * verify
    prompt = prefills * batch * wl.input_len
    tokens = prompt + batch * decode_steps * verify
    budget = launch.limits.max_num_batched_tokens
    iterations = max(decode_steps, tokens / budget)
    context = wl.input_len + wl.output_len / 2
    chunk = max(1.0, min(float(wl.input_len), budget - decodes))
    with_prompt = min(iterations, prompt / chunk)
    if with_prompt >= iterations:
        per_iteration = tokens / iterations
        seconds, terms = _iteration(launch, per_iteration, batch, context, prompt / iterations, wl.input_len)
        return Life(iterations * seconds, seconds, terms, per_iteration)
    mixed, mixed_terms = _iteration(launch, decodes + chunk, batch, context, chunk, wl.input_len)
    alone, alone_terms = _iteration(launch, decodes, batch, context, 0.0, wl.input_len)
    rest = iterations - with_prompt
    total = with_prompt * mixed + rest * alone
    terms = blended(mixed_terms, with_prompt / iterations, alone_terms, rest / iterations)
    return Life(total, total / iterations, terms, tokens / iterations)


def _prefill_s(launch: PerfLaunch, wl: Workload, batch: int) -> float:
    """Seconds to prefill one request's input beside ``batch`` decodes."""
    budget = max(1, launch.limits.max_num_batched_tokens - batch)
    chunk = min(wl.input_len, budget)
    chunks = math.ceil(wl.input_len / budget)
    step, _ = _iteration(launch, chunk + batch, batch, wl.input_len, chunk, wl.input_len)
    return chunks * step


def _offline_ttft(launch: PerfLaunch, wl: Workload, batch: int, lf: Life, q: float) -> float:
    """The request at position ``q x N`` of an offline run: the steps of prompt tokens queued ahead
    of it, each as full as the first wave's prompts (``min(N, B)`` of them, all waiting at once) fill
    the step's budget beside the decodes already running, and past the first wave, a slot."""
    position = q * wl.num_prompts
    decodes = int(min(position, batch))
    budget = max(1, launch.limits.max_num_batched_tokens - decodes)
    chunk = min(budget, min(wl.num_prompts, batch) * wl.input_len)
    step, _ = _iteration(launch, chunk + decodes, decodes, wl.input_len, chunk, wl.input_len)
    queued = math.ceil((position + 1) * wl.input_len / budget) * step
    if position < batch:  # the first wave: prefills queued ahead of it
        return queued
    prefill = _prefill_s(launch, wl, batch)
    return max(queued, (position - batch) / batch * lf.seconds + prefill + lf.iteration / 2)


def _rate_batch(launch: PerfLaunch, wl: Workload, per_replica: float, cap: int) -> int:
    batch = 1.0
    for _ in range(RATE_ITERATIONS):
        want = per_replica * life(launch, wl, max(1, round(batch))).seconds
        batch = min(float(cap), (batch + want) / 2)
    return max(1, round(batch))


def lockstep(launch: PerfLaunch, wl: Workload, batch: int) -> bool:
    """Whether the workload's requests run in waves of ``batch`` (the module's text)."""
    return closed_fixed_loop(launch, wl, batch) and batch * wl.input_len <= launch.limits.max_num_batched_tokens


def closed_fixed_loop(launch: PerfLaunch, wl: Workload, batch: int) -> bool:
    """A closed loop of fixed-length requests (no speculative decoding) whose clients all run at once."""
    per_replica = math.ceil((wl.concurrency or 0) / launch.replicas)
    return (wl.fixed_lengths and wl.request_rate is None and wl.concurrency is not None and launch.spec is None
            and per_replica == batch)


def cohort_size(launch: PerfLaunch, wl: Workload, batch: int) -> int:
    """Whole prompts one step admits beside the other requests' decodes (0: not even one)."""
    room = launch.limits.max_num_batched_tokens - batch
    return min(batch, room // max(1, wl.input_len - 1)) if room >= wl.input_len - 1 else 0


def cohorts(launch: PerfLaunch, wl: Workload, batch: int) -> bool:
    """Whether the workload's requests run in cohorts (the module's text)."""
    return (closed_fixed_loop(launch, wl, batch) and not lockstep(launch, wl, batch)
            and cohort_size(launch, wl, batch) >= 1)


def _closed_loop(launch: PerfLaunch, wl: Workload, batch: int) -> Prediction:
    """Cohorts (the module's text), priced by replaying the loop (``servekit.perf.closed_loop``)."""

    def step(tokens: int, seqs: int, context: float, prefill: int) -> float:
        return _iteration(launch, tokens, seqs, context, prefill, wl.input_len)[0]

    loop = Loop(clients=batch, requests=max(1, math.ceil(wl.num_prompts / launch.replicas)), input_len=wl.input_len,
                output_len=wl.output_len, budget=launch.limits.max_num_batched_tokens,
                seats=min(batch, launch.limits.max_num_seqs), request_s=launch.rates.request_s)
    requests = replay(loop, step)
    ttft = sorted(r.first - r.sent for r in requests)
    gaps = max(1, wl.output_len - 1)
    tpot = sorted((r.done - r.first) / gaps for r in requests)
    _, terms = _iteration(launch, batch, batch, wl.input_len + wl.output_len / 2, 0, wl.input_len)
    return Prediction(
        output_throughput_tok_s=launch.replicas * len(requests) * wl.output_len / max(r.done for r in requests),
        ttft_ms=quantile(ttft, 0.5) * 1e3, ttft_p99_ms=quantile(ttft, 0.99) * 1e3,
        tpot_ms=quantile(tpot, 0.5) * 1e3, tpot_p99_ms=quantile(tpot, 0.99) * 1e3, binding=terms.binding,
        batch=batch, devices=launch.devices, terms_ms={k: round(v, 4) for k, v in terms.as_ms().items()},
        regime=f"cohorts of {cohort_size(launch, wl, batch)}",
    )


def _waves(launch: PerfLaunch, wl: Workload, batch: int) -> Prediction:
    alone, _ = _iteration(launch, wl.input_len, 1, wl.input_len, wl.input_len, wl.input_len)
    rest = (batch - 1) * wl.input_len
    others = _iteration(launch, rest + 1, batch, wl.input_len, rest, wl.input_len)[0] if batch > 1 else 0.0
    decode, terms = _iteration(launch, batch, batch, wl.input_len + wl.output_len / 2, 0, wl.input_len)
    steps = max(1, wl.output_len - 1)
    arrive = launch.rates.request_s
    ttft = (arrive + alone, arrive + alone + others)  # (the first of the wave, the others)
    tpot = (decode + others / steps, decode)

    def median(pair: tuple[float, float]) -> float:
        return pair[0] if batch == 1 else (pair[0] + pair[1]) / 2 if batch == 2 else pair[1]

    wave = arrive + alone + others + steps * decode
    return Prediction(
        output_throughput_tok_s=launch.replicas * batch * wl.output_len / wave,
        ttft_ms=median(ttft) * 1e3, ttft_p99_ms=max(ttft) * 1e3, tpot_ms=median(tpot) * 1e3,
        tpot_p99_ms=max(tpot) * 1e3, binding=terms.binding, batch=batch, devices=launch.devices,
        terms_ms={k: round(v, 4) for k, v in terms.as_ms().items()}, regime=f"waves of {batch}",
    )


def predict(launch: PerfLaunch, wl: Workload) -> Prediction:
    cap, limit = batch_limit(launch, wl)
    demand = wl.num_prompts if wl.offline else wl.concurrency
    client = math.ceil(wl.concurrency / launch.replicas) if wl.request_rate is not None and wl.concurrency else None
    if client is not None and client < cap:  # a request rate under the client's concurrency cap
        cap, limit = max(1, client), "client concurrency"
    if wl.request_rate is not None:
        per_replica = wl.request_rate / launch.replicas
        full = life(launch, wl, cap)
        capacity = cap / full.seconds
        batch = cap if per_replica >= capacity else _rate_batch(launch, wl, per_replica, cap)
    else:
        per_replica_demand = max(1, math.ceil((demand or 1) / launch.replicas))
        running = per_replica_demand * (launch.occupancy if wl.offline and not wl.fixed_lengths else 1.0)
        batch = max(1, min(round(running), cap))
        capacity = per_replica = 0.0
        if lockstep(launch, wl, batch):
            return _waves(launch, wl, batch)
        if cohorts(launch, wl, batch):
            return _closed_loop(launch, wl, batch)
    lf = life(launch, wl, batch)
    prefill = _prefill_s(launch, wl, batch)
    arrive = launch.rates.request_s
    held = (launch.limits.read_every - 1) * lf.iteration
    service, service_p99 = arrive + prefill + (lf.iteration + held) / 2, arrive + prefill + lf.iteration + held
    bound = lf.terms.binding
    if wl.request_rate is not None:
        throughput = min(wl.request_rate, capacity * launch.replicas) * wl.output_len
        if per_replica >= capacity:
            grow = wl.num_prompts / launch.replicas * (1 / capacity - 1 / per_replica)
            wait, wait_p99, bound = grow / 2, grow * 0.99, limit
        else:
            rho = per_replica / capacity
            wait = rho / (2 * (1 - rho)) * lf.iteration
            wait_p99 = wait * 4.6  # M/D/1 tail: exp(-t/mean) beyond the mean, ln(100) = 4.6
        ttft, ttft_p99 = service + wait, service_p99 + wait_p99
    else:
        throughput = launch.replicas * batch * wl.output_len / lf.seconds
        per_replica_demand = max(1, math.ceil((demand or 1) / launch.replicas))
        if per_replica_demand > batch and batch >= cap:  # a cap holds requests back (not the occupancy)
            bound = limit
        if wl.offline:
            ttft = arrive + _offline_ttft(launch, wl, batch, lf, 0.5)
            ttft_p99 = arrive + _offline_ttft(launch, wl, batch, lf, 0.99)
        else:
            wait = max(0, per_replica_demand - batch) / batch * lf.seconds
            ttft, ttft_p99 = service + wait, service_p99 + wait
    tpot = lf.seconds / wl.output_len
    tpot_p99 = life(launch, wl, batch, P99_PREFILLS).seconds / wl.output_len
    return Prediction(
        output_throughput_tok_s=throughput, ttft_ms=ttft * 1e3, ttft_p99_ms=ttft_p99 * 1e3,
        tpot_ms=tpot * 1e3, tpot_p99_ms=max(tpot, tpot_p99) * 1e3, binding=bound, batch=batch,
        devices=launch.devices, terms_ms={k: round(v, 4) for k, v in lf.terms.as_ms().items()},
    )
