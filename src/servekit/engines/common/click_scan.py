"""Read a MAX option list as click does: exact option names only (no prefixes, no underscore
folding), ``--opt=value``, and an option that takes a value takes the next word whatever it is."""

from __future__ import annotations

from servekit.engines.common.flags import FlagCatalog
from servekit.engines.common.scan_result import HELP, Occurrence, Scan


def scan_click(catalog: FlagCatalog, args: list[str]) -> Scan:
    out = Scan()
    index = {o: s for s in catalog.flags for o in s.option_strings()}
    for opt in HELP.option_strings():
        index.setdefault(opt, HELP)
    loose: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            loose.extend(args[i + 1:])
            break
        if not arg.startswith("-") or len(arg) == 1:
            loose.append(arg)
            i += 1
            continue
        name, eq, explicit = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        spec = index.get(name)
        if spec is None:
            out.error("unknown-option", f"no such option {name}", name)
            value_follows = not eq and i + 1 < len(args) and not args[i + 1].startswith("-")
            i += 2 if value_follows else 1  # its value belongs to the same mistake
            continue
        if not spec.takes_value:
            if eq:
                out.error("unexpected-value", f"{name} takes no value (got {explicit!r})", name,
                          f"write {name} alone" + (f" or {spec.negation}" if spec.negation else ""))
            else:
                out.occurrences.append(Occurrence(spec, arg, name, (), negated=spec.is_negation(name)))
            i += 1
            continue
        if eq:
            value, i = explicit, i + 1
        elif i + 1 < len(args):
            value, i = args[i + 1], i + 2
        else:
            out.error("missing-value", f"{name} needs a value", name)
            break
        out.occurrences.append(Occurrence(spec, arg, name, (value,)))
    taken = len(catalog.positionals)
    out.positionals, out.extras = loose[:taken], loose[taken:]
    return out
