"""Dump every option of ``python -m sglang.launch_server`` from SGLang's own argument parser
(``ServerArgs.add_cli_args``), as a servekit flag catalog.

SGLang 0.5.23 pins torch 2.14.1 and CUDA packages, so it runs here only in the minimal parser
environment scripts/install_parser_envs.sh builds (``--no-deps`` plus what its argument modules
import)::

    .servekit-ci/parsers/sglang-0.5.23/bin/python scripts/extract_sglang_flags.py \\
        > src/servekit/engines/sglang/data/sglang-0.5.23.json

Older releases (the history catalogs, stored as ``sglang-<V>.json.gz``): the same environment
plus the packages older ``server_args`` modules import (``sglang-history`` in
scripts/install_parser_envs.sh), with the release's wheel unpacked ahead of the installed SGLang
on ``PYTHONPATH``; scripts/extract_sglang_history.sh runs all of it::

    pip download --no-deps sglang==0.5.9 -d /work/cache/wheels
    python -m zipfile -e /work/cache/wheels/sglang-0.5.9-*.whl /work/cache/sglang-0.5.9
    PYTHONPATH=/work/cache/sglang-0.5.9 .servekit-ci/parsers/sglang-history/bin/python \\
        scripts/extract_sglang_flags.py --stub torchvision==0.28.0 | gzip -n -9 > .../sglang-0.5.9.json.gz

``--stub torchvision==0.28.0`` serves that package as placeholders (scripts/parser_stubs.py:
0.5.6 to 0.5.20 import it at module level; its PyPI wheels need CUDA torch). 0.4.0 to 0.4.8
import names of an older triton (``triton.runtime.cache.default_cache_dir``) and ``decord`` at
module level: ``--shadow triton==3.1.0,decord==0.6.0`` serves those as placeholders over the
installed triton. The catalog lists the placeholders something imported in
``source.stubbed_modules``. 0.5.11 to 0.5.18 need the transformers their wheel pins, with
``tokenizers==0.22.2`` and ``huggingface-hub<2``, placed after the wheel on ``PYTHONPATH``.
``source.environment`` says full or minimal (a minimal one is announced on stderr too). The
tool-call and reasoning parser names come from SGLang's static name lists
(``sglang.srt.function_call.parser_names`` / ``sglang.srt.parser.reasoning_parser_names``) where
the release has them; older releases enforce them as ``choices``.
Standard library and SGLang only: servekit is not importable in that environment.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import logging
import sys
from typing import Any

from extract_source import environment_facts, installed_distribution
from extract_values import action_kind, jsonable
from flag_text import first_sentence

logging.disable(logging.WARNING)
FORMAT = 1


def value_type(func: Any) -> dict[str, Any]:
    """The value type behind an argparse ``type=`` callable; unknown converters are probed."""
    if func is None or func is str:
        return {"type": "str"}
    if func is int:
        return {"type": "int"}
    if func is float:
        return {"type": "float"}
    if func is json.loads:
        return {"type": "json", "json_valued": True}
    name = getattr(func, "__name__", "") or type(func).__name__
    for sample, verdict in (('{"a": 1}', {"type": "json_or_str", "json_valued": True}), ("1.5", {"type": "float"})):
        try:
            out = func(sample)
        except Exception:  # noqa: BLE001 - refusing the sample tells what it is not
            continue
        if isinstance(out, dict):
            return verdict
        if isinstance(out, float) and "float" in name:
            return verdict
    return {"type": "custom"}


def flag_entry(action: argparse.Action, group: str) -> dict[str, Any]:
    kind = action_kind(action)
    longs = [o for o in action.option_strings if o.startswith("--")]
    negation = next((o for o in longs if o.startswith("--no-")), None) if kind == "boolean_optional" else None
    longs = [o for o in longs if o != negation]
    name = longs[0] if longs else action.option_strings[0]
    takes_value = action.nargs != 0
    entry: dict[str, Any] = {
        "name": name,
        "aliases": [o for o in action.option_strings if o not in (name, negation)],
        "dest": action.dest,
        "action": kind,
        "takes_value": takes_value,
        "nargs": action.nargs,
        "default": jsonable(action.default),
        "help": first_sentence(action.help if action.help != argparse.SUPPRESS else ""),
        "deprecated": type(action).__name__.startswith("Deprecated"),
        "hidden": action.help == argparse.SUPPRESS,
        "negation": negation,
        "group": group,
        "required": bool(action.required),
        **(value_type(action.type) if takes_value else {"type": "bool"}),
    }
    if action.choices is not None:  # a set's order changes with the hash seed: sorted
        choices = [str(c) for c in action.choices]
        entry["choices"] = sorted(choices) if isinstance(action.choices, (set, frozenset)) else choices
    if kind == "store" and action.nargs == "?":
        entry["const"] = jsonable(action.const)
    return entry


def build_parser() -> argparse.ArgumentParser:
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog="python -m sglang.launch_server")
    ServerArgs.add_cli_args(parser)
    return parser


def registries() -> dict[str, list[str]]:
    try:
        from sglang.srt.function_call.parser_names import TOOL_CALL_PARSER_NAMES
        from sglang.srt.parser.reasoning_parser_names import REASONING_PARSER_NAMES
    except ImportError:
        return {}
    return {"tool_call_parsers": sorted(TOOL_CALL_PARSER_NAMES), "reasoning_parsers": sorted(REASONING_PARSER_NAMES)}


def main(argv: list[str]) -> int:
    stubs = argv[argv.index("--stub") + 1].split(",") if "--stub" in argv else []
    shadowed = argv[argv.index("--shadow") + 1].split(",") if "--shadow" in argv else []
    if stubs or shadowed:
        import parser_stubs

        parser_stubs.install(stubs)
        parser_stubs.shadow(shadowed)
    parser = build_parser()
    flags, positionals = [], []
    for group in parser._action_groups:
        for action in group._group_actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not action.option_strings:
                positionals.append(action.dest)
            else:
                flags.append(flag_entry(action, group.title or ""))
    known = {o for a in parser._actions for o in a.option_strings}
    names = registries()
    checks = [{"flag": "--tool-call-parser", "registry": "tool_call_parsers"},
              {"flag": "--reasoning-parser", "registry": "reasoning_parsers"}]
    catalog = {
        "format": FORMAT,
        "engine": "sglang",
        "version": importlib.metadata.version("sglang"),
        "command": "serve",
        "style": "argparse",
        "allow_abbrev": bool(parser.allow_abbrev),
        "source": {
            **environment_facts(installed_distribution(("sglang",))),
            "torch": importlib.metadata.version("torch"),
            **({"transformers": importlib.metadata.version("transformers")} if "transformers" in sys.modules else {}),
            "parser": "sglang.srt.server_args.ServerArgs.add_cli_args",
            "method": "parser",
            **({"stubbed_modules": parser_stubs.used(stubs + shadowed)} if stubs or shadowed else {}),
        },
        "positionals": positionals,
        "flags": sorted(flags, key=lambda f: f["name"]),
        "registries": names,
        "registry_checks": [c for c in checks if c["flag"] in known and c["registry"] in names],
        "requirements": [],
        "renamed": {},
    }
    json.dump(catalog, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
