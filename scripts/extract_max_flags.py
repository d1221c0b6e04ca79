"""Dump every option of each ``max`` pipeline sub-command from MAX's own click commands.

Run with the interpreter of a MAX environment (servekit engine path max==26.7.0)::

    $(servekit engine path max==26.7.0) scripts/extract_max_flags.py serve \
        > src/servekit/engines/max/data/max-26.7.0.json
    $(servekit engine path max==26.7.0) scripts/extract_max_flags.py --all src/servekit/engines/max/data

``--all DIR`` writes one catalog per sub-command of ``max._entrypoints.pipelines.main`` (MAX 26.4
and older: ``max.entrypoints``):
``max-<version>.json`` for serve, ``max-<version>-<command>.json`` for the others.

Standard library, click and MAX only: servekit is not importable in that environment.
"""

from __future__ import annotations

import enum
import importlib
import importlib.metadata
import json
import sys
from typing import Any

from extract_values import jsonable
from flag_text import first_sentence

FORMAT = 1


def entrypoints() -> str:
    """The package of MAX's command line in the installed release, which must come from the same
    folder as the ``max`` distribution: ``max`` is a namespace package, so a release placed ahead
    of another on ``PYTHONPATH`` (scripts/extract_max_history.sh) would otherwise borrow the
    other's modules."""
    import importlib
    from pathlib import Path

    root = Path(importlib.metadata.distribution("max").locate_file("")).resolve()
    for name in ("max._entrypoints", "max.entrypoints"):
        candidate = root / Path(*name.split("."))
        if candidate.is_dir():
            module = importlib.import_module(f"{name}.pipelines")
            if not Path(module.__file__).resolve().is_relative_to(root):
                raise SystemExit(f"{name} loads from {module.__file__}, not from the max distribution at {root}")
            return name
    raise SystemExit(f"no MAX command-line package under {root}")
# Pairs MAX refuses together before parsing (check_model_flag_conflict); confirmed below.
CONFLICTS = [["--model", "--model-path"]]


def default_value(value: Any) -> Any:
    """A JSON default, or None for callables and click's internal "unset" sentinels (a bare
    ``object()``, or an enum member standing for one)."""
    sentinel = isinstance(value, enum.Enum) and type(value.value) is object
    if callable(value) or type(value) is object or sentinel:
        return None
    out = jsonable(value)
    return None if isinstance(out, str) and out.startswith("<") and " object at " in out else out


def choice_tokens(param_type: Any, command: Any) -> list[str]:
    """The strings a click Choice compares input against (already case-folded when insensitive)."""
    import click

    mapping = getattr(param_type, "_normalized_mapping", None)
    if mapping is not None:
        return [str(v) for v in mapping(click.Context(command)).values()]
    return [str(c.name if isinstance(c, enum.Enum) else c) for c in param_type.choices]


def type_facts(option: Any, command: Any) -> dict[str, Any]:
    import click

    t = option.type
    if option.is_flag:
        return {"type": "bool"}
    if isinstance(t, click.Choice):
        return {
            "type": "choice",
            "choices": choice_tokens(t, command),
            "case_sensitive": bool(t.case_sensitive),
        }
    if isinstance(t, click.types.IntParamType):
        facts: dict[str, Any] = {"type": "int"}
    elif isinstance(t, click.types.FloatParamType):
        facts = {"type": "float"}
    elif isinstance(t, click.types.BoolParamType):
        facts = {"type": "click_bool"}
    elif isinstance(t, click.Path):
        facts = {"type": "path", "must_exist": bool(t.exists)}
    elif getattr(t, "name", "") == "json":
        facts = {"type": "json_or_file", "json_valued": True}
    elif getattr(t, "name", "") == "devices":
        facts = {"type": "devices"}
    elif isinstance(t, click.types.StringParamType):
        facts = {"type": "str"}
    else:
        facts = {"type": getattr(t, "name", type(t).__name__)}
    for bound in ("min", "max"):
        if getattr(t, bound, None) is not None:
            facts[bound] = getattr(t, bound)
    return facts


def option_entry(option: Any, command: Any) -> dict[str, Any]:
    longs = [o for o in option.opts if o.startswith("--")]
    name = longs[0] if longs else option.opts[0]
    negation = option.secondary_opts[0] if option.secondary_opts else None
    deprecated = getattr(option, "deprecated", False)
    entry: dict[str, Any] = {
        "name": name,
        "aliases": [o for o in option.opts if o != name],
        "dest": option.name,
        "action": "flag" if option.is_flag else ("multiple" if option.multiple else "store"),
        "takes_value": not option.is_flag,
        "nargs": None if option.nargs == 1 else option.nargs,
        "multiple": bool(option.multiple),
        "required": bool(option.required),
        "default": default_value(option.default),
        "help": first_sentence(option.help),
        "deprecated": bool(deprecated),
        "hidden": bool(option.hidden),
        "negation": negation,
        "group": "",
    }
    entry.update(type_facts(option, command))
    return entry


def confirmed_conflicts() -> list[list[str]]:
    check_model_flag_conflict = getattr(importlib.import_module(f"{entrypoints()}.pipelines"),
                                        "check_model_flag_conflict", None)
    if check_model_flag_conflict is None:  # MAX 26.2 and older have no such check
        print("conflicts not checked: this MAX has no check_model_flag_conflict", file=sys.stderr)
        return []

    out = []
    for pair in CONFLICTS:
        argv = [part for flag in pair for part in (flag, "x")]
        try:
            check_model_flag_conflict(argv)
        except ValueError:
            out.append(pair)
        else:
            print(f"conflict not enforced by this MAX: {pair}", file=sys.stderr)
    return out


def _closure(func: Any) -> dict[str, Any]:
    code = getattr(func, "__code__", None)
    cells = getattr(func, "__closure__", None) or ()
    return dict(zip(code.co_freevars, (c.cell_contents for c in cells), strict=False)) if code else {}


def requirements(command: Any, command_name: str, options: list[Any]) -> list[dict[str, Any]]:
    """Options whose click callback refuses them without another flag (MAX's click_option_requires),
    each confirmed by letting the real command parse the option alone."""
    import click

    out = []
    for option in options:
        needed = _closure(option.callback).get("requires") if option.callback else None
        if not isinstance(needed, str):
            continue
        flag = option.opts[0]
        choices = getattr(option.type, "choices", None)
        sample = [] if option.is_flag else [choice_tokens(option.type, command)[0] if choices else "1"]
        try:
            command.make_context(command_name, ["--model", "m", flag, *sample])
        except click.UsageError as exc:
            if "requires" in exc.format_message():
                out.append({"flag": flag, "requires": [f"--{needed}"], "message": exc.format_message()})
    return sorted(out, key=lambda r: r["flag"])


def architectures() -> list[str]:
    """Model architectures MAX can serve (what ``max list`` prints)."""
    try:
        PIPELINE_REGISTRY = importlib.import_module(f"{entrypoints()}.cli.list").PIPELINE_REGISTRY

        return sorted(arch.name for arch in PIPELINE_REGISTRY.all_architectures())
    except Exception as exc:  # noqa: BLE001 - optional extra, the catalog is useful without it
        print(f"architectures not read: {exc}", file=sys.stderr)
        return []


def command_catalog(command_name: str) -> dict[str, Any]:
    """One sub-command's catalog, as ``commands[name].make_context(name, args)`` parses it."""
    max_main = importlib.import_module(f"{entrypoints()}.pipelines").main
    command = max_main.commands[command_name]
    loader = getattr(command, "_ensure_options_loaded", None)
    if loader is not None:
        loader()
    options = [p for p in command.params if p.param_type_name == "option"]
    arguments = [p.name for p in command.params if p.param_type_name == "argument"]
    flags = [option_entry(o, command) for o in options if "--help" not in o.opts]
    version = importlib.metadata.version("max")
    names = {o for p in options for o in p.opts}
    settings = command.context_settings or {}
    return {
        "format": FORMAT,
        "engine": "max",
        "version": version,
        "command": command_name,
        "style": "click",
        "allow_abbrev": False,
        "source": {
            "distribution": "max",
            "distribution_version": version,
            "click": importlib.metadata.version("click"),
            "python": sys.version.split()[0],
            "parser": f"{entrypoints()}.pipelines.main.commands[{command_name!r}]",
            "ignore_unknown_options": bool(settings.get("ignore_unknown_options")),
        },
        "positionals": arguments,
        "flags": sorted(flags, key=lambda f: f["name"]),
        "registries": {"architectures": architectures()},
        "registry_checks": [],
        "requirements": requirements(command, command_name, options),
        "conflicts": [p for p in confirmed_conflicts() if set(p) <= names],
        "renamed": {},
    }


def write_all(folder: str) -> int:
    """Every pipeline sub-command's catalog into ``folder``."""
    from pathlib import Path

    max_main = importlib.import_module(f"{entrypoints()}.pipelines").main
    version = importlib.metadata.version("max")
    for name in max_main.commands:
        suffix = "" if name == "serve" else f"-{name}"
        path = Path(folder) / f"max-{version}{suffix}.json"
        path.write_text(json.dumps(command_catalog(name), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {path}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--all"] and len(argv) == 2:
        return write_all(argv[1])
    json.dump(command_catalog(argv[0] if argv else "serve"), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
