"""A closed loop of fixed-length requests replayed step by step, as vLLM's scheduler takes it.

``servekit.perf.predict`` prices cohorts (a loop whose prompts overflow one step) with it. Each
step takes the running requests first (a decode token each, or the rest of a chunked prompt as far
as the step's token budget goes), then the waiting ones in order of arrival while the budget lasts
and fewer than ``seats`` run, each taking as much of its prompt as the budget leaves (chunked
prefill): ``Scheduler.schedule`` of vLLM's V1 engine. A request reaches the engine ``request_s``
after its client sends it; a client sends its next request when the last token of its previous
one comes; requests sent together reach the engine one after another, and an idle engine steps as
soon as one has (so the first is prefilled alone, as in waves). Decode-only stretches between two
events are priced in one call of the step's price, at their middle context.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from servekit.records import record

SIMULATED_CYCLES = 8
"""A loop is replayed for at most this many of its clients' cycles (``SIMULATED_CYCLES x clients``
requests): past the first cycle's start-up the loop repeats itself, and the medians of a longer
run are those of its repeating part."""
APART_S = 1e-6
"""How far apart requests sent together reach the engine."""

StepPrice = Callable[[int, int, float, int], float]
"""Seconds of one step of (tokens, running sequences, their mean context, prompt tokens among the tokens)."""


@record
class Loop:
    clients: int
    requests: int
    """Requests of the whole run (the replay stops at ``SIMULATED_CYCLES`` cycles)."""
    input_len: int
    output_len: int
    budget: int
    """The step's token budget (``max_num_batched_tokens``)."""
    seats: int
    """Most requests running at once."""
    request_s: float
    """From a client's send to the request reaching the engine."""


@dataclass(eq=False)
class Request:
    """One request of a replay (mutable: it advances as the replay steps)."""

    sent: float
    arrives: float
    prefilled: int = 0
    written: int = 0
    first: float = 0.0
    done: float = 0.0


def _take(loop: Loop, running: list[Request], ready: list[Request], waiting: list[Request]) -> list[tuple[Request, int]]:
    """What one step schedules: (request, its tokens this step), admitting ready requests to ``running``."""
    taken: list[tuple[Request, int]] = []
    tokens = 0
    for r in running:
        want = loop.input_len - r.prefilled if r.prefilled < loop.input_len else 1
        take = min(want, loop.budget - tokens)
        if take > 0:
            taken.append((r, take))
            tokens += take
    for r in ready:
        if len(running) >= loop.seats or tokens >= loop.budget:
            break
        take = min(loop.input_len, loop.budget - tokens)
        waiting.remove(r)
        running.append(r)
        taken.append((r, take))
        tokens += take
    return taken


def replay(loop: Loop, price: StepPrice) -> list[Request]:
    """The requests of ``loop`` with their send, first-token and last-token times."""
    total = min(loop.requests, SIMULATED_CYCLES * loop.clients)
    requests = [Request(0.0, loop.request_s + i * APART_S) for i in range(min(loop.clients, total))]
    running: list[Request] = []
    waiting = list(requests)
    clock = 0.0
    while running or waiting:
        ready = [r for r in waiting if r.arrives <= clock]
        if not running and not ready:
            clock = min(r.arrives for r in waiting)
            continue
        taken = _take(loop, running, ready, waiting)
        tokens = sum(take for _, take in taken)
        prefill = sum(take for r, take in taken if r.prefilled < loop.input_len)
        context = sum(r.prefilled + r.written for r in running) / len(running)
        steps = 1
        if prefill == 0 and (len(running) >= loop.seats or not any(r.arrives <= clock for r in waiting)):
            left = min(loop.output_len - r.written for r in running)
            later = [r.arrives - clock for r in waiting if r.arrives > clock]
            one = price(tokens, len(running), context, 0)
            steps = max(1, min(left, int(min(later) / one) + 1)) if later else max(1, left)
        clock += steps * price(tokens, len(running), context + (steps - 1) / 2, prefill)
        ended = []
        for r, take in taken:
            if r.prefilled < loop.input_len:
                r.prefilled += take
                if r.prefilled >= loop.input_len:
                    r.written, r.first = 1, clock
            else:
                r.written += steps
            if r.prefilled >= loop.input_len and r.written >= loop.output_len:
                r.done = clock
                ended.append(r)
        for n, r in enumerate(ended):
            running.remove(r)
            if len(requests) < total:
                nxt = Request(clock, clock + loop.request_s + n * APART_S)
                requests.append(nxt)
                waiting.append(nxt)
    return requests


def quantile(ordered: list[float], q: float) -> float:
    """The ``q`` quantile of sorted values, interpolated between neighbours (numpy's default, which
    ``vllm bench serve`` reports its percentiles with)."""
    at = q * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (at - low) * (ordered[high] - ordered[low])
