"""Read an option list the way the engine's own parser would, using only its stored flag catalog.

Two parser families are covered:

* ``argparse`` (vLLM): vLLM first rewrites the list (underscores to dashes in option names,
  ``-O3`` shorthand, dotted ``--json-flag.key value`` merged into one JSON value), then
  Python's argparse matches exact option strings, ``--opt=value``, unique long-option
  prefixes (abbreviations) and single-dash prefixes, and hands values to options by count.
* ``click`` (MAX): exact long options only, ``--opt=value``, and an option that takes a
  value takes the next word whatever it looks like.

The result is a list of :class:`Occurrence` (which flag, written how, with which values) plus
findings for what the parser itself would refuse. Value checks live in ``valuecheck``.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from servekit.engines.findings import Finding
from servekit.engines.flags import FlagCatalog, FlagSpec
from servekit.engines.valuecheck import human_readable_int

HELP = FlagSpec(name="--help", aliases=("-h",), dest="help", takes_value=False, type="bool")
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
_NAME_PART = re.compile(r"(?<=--)[^.]*")


@dataclass(frozen=True)
class Occurrence:
    """One option as the parser resolved it."""

    spec: FlagSpec
    written: str  # the token as the user wrote it (before rewriting)
    option: str  # the option string it resolved to
    values: tuple[str, ...] = ()
    negated: bool = False
    via_prefix: bool = False
    from_dotted: bool = False


@dataclass
class Scan:
    occurrences: list[Occurrence] = field(default_factory=list)
    positionals: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def error(self, code: str, message: str, option: str | None = None, fix: str | None = None) -> None:
        self.findings.append(Finding("error", code, message, option, fix))

    def warn(self, code: str, message: str, option: str | None = None, fix: str | None = None) -> None:
        self.findings.append(Finding("warning", code, message, option, fix))


def scan(catalog: FlagCatalog, args: list[str]) -> Scan:
    if catalog.style == "click":
        return _scan_click(catalog, args)
    return _scan_argparse(catalog, args)


# ---------------------------------------------------------------- argparse (vLLM)


@dataclass(frozen=True)
class _Token:
    text: str
    written: str
    dotted: bool = False


def _rewrite(args: list[str], out: Scan) -> list[_Token]:
    """vLLM's own rewriting before argparse sees the list."""
    tokens: list[_Token] = []
    for i, arg in enumerate(args):
        if arg.startswith("--"):
            key, eq, value = arg.partition("=")
            fixed = _NAME_PART.sub(lambda m: m.group(0).replace("_", "-"), key, count=1)
            tokens.append(_Token(fixed + eq + value, arg))
        elif arg.startswith("-O") and arg != "-O":
            level = arg[3:] if arg[2:3] == "=" else arg[2:]
            tokens += [_Token("--optimization-level", arg), _Token(level, arg)]
        elif arg == "-O" and i + 1 < len(args) and args[i + 1] in {"0", "1", "2", "3"}:
            tokens.append(_Token("--optimization-level", arg))
        else:
            tokens.append(_Token(arg, arg))
    return _merge_dotted(tokens, out)


def _merge_dotted(tokens: list[_Token], out: Scan) -> list[_Token]:
    """``--flag.a.b v`` and ``--flag.k+ v1,v2`` become one ``--flag {json}`` at the end."""
    merged: dict[str, dict[str, Any]] = defaultdict(dict)
    written: dict[str, str] = {}
    keep: list[_Token] = []
    skip = False
    for i, tok in enumerate(tokens):
        if skip:
            skip = False
            continue
        text = tok.text
        if not (text.startswith("-") and "." in text):
            keep.append(tok)
            continue
        name, eq, value = text.partition("=")
        if eq and "." not in name:
            keep.append(tok)
            continue
        if not eq:
            if i + 1 >= len(tokens):
                out.error("missing-value", f"{tok.written} needs a value", tok.written)
                continue
            value, skip = tokens[i + 1].text, True
        if name.endswith("+"):
            name, value = name[:-1], json.dumps(value.split(","))
        key, *path = name.split(".")
        update: Any = _dotted_value(value)
        for part in reversed(path):
            update = {part: update}
        for dup in _merge(merged[key], update):
            out.warn("duplicate-key", f"{key}.{dup} is given more than once; the last one wins", key)
        written.setdefault(key, tok.written)
    for key, obj in merged.items():
        keep += [_Token(key, written[key], dotted=True), _Token(json.dumps(obj), written[key], dotted=True)]
    return keep


def _merge(into: dict[str, Any], update: dict[str, Any]) -> list[str]:
    """Deep-merge like vLLM does (lists extend, dicts merge, else overwrite); returns overwritten keys."""
    dups: list[str] = []
    for k, v in update.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            dups += [f"{k}.{d}" for d in _merge(into[k], v)]
        elif isinstance(v, list) and isinstance(into.get(k), list):
            into[k] = into[k] + v
        else:
            if k in into:
                dups.append(k)
            into[k] = v
    return dups


def _dotted_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        try:
            return human_readable_int(text)
        except ValueError:
            return text


class _Resolver:
    """Which flag an argparse token names: exact, ``opt=value``, prefix, or none."""

    def __init__(self, catalog: FlagCatalog) -> None:
        self.index: dict[str, FlagSpec] = {o: s for s in catalog.flags for o in s.option_strings()}
        for opt in HELP.option_strings():
            self.index.setdefault(opt, HELP)
        self.allow_abbrev = catalog.allow_abbrev

    def resolve(self, arg: str) -> tuple[str, FlagSpec | None, str | None, bool] | None:
        """None: a value word. Else (option string, spec or None if unknown, explicit value, prefix)."""
        if not arg or arg[0] != "-":
            return None
        if arg in self.index:
            return arg, self.index[arg], None, False
        if len(arg) == 1:
            return None
        if "=" in arg:
            name, value = arg.split("=", 1)
            if name in self.index:
                return name, self.index[name], value, False
        matches = self._prefix_matches(arg)
        if len(matches) > 1:
            names = ", ".join(m[0] for m in matches)
            raise _Ambiguous(f"ambiguous option: {arg} could match {names}")
        if len(matches) == 1:
            name, value = matches[0]
            return name, self.index[name], value, True
        if _NEGATIVE_NUMBER.match(arg) or " " in arg:
            return None
        return arg, None, None, False

    def _prefix_matches(self, arg: str) -> list[tuple[str, str | None]]:
        if arg[1] == "-":
            if not self.allow_abbrev:
                return []
            prefix, _, value = arg.partition("=")
            explicit = value if "=" in arg else None
            return [(o, explicit) for o in self.index if o.startswith(prefix)]
        out: list[tuple[str, str | None]] = []
        for opt in self.index:
            if opt == arg[:2]:
                out.append((opt, arg[2:]))
            elif opt.startswith(arg):
                out.append((opt, None))
        return out


class _Ambiguous(Exception):
    pass


def _scan_argparse(catalog: FlagCatalog, args: list[str]) -> Scan:
    out = Scan()
    tokens = _rewrite(args, out)
    resolver = _Resolver(catalog)
    kinds: list[tuple[str, FlagSpec | None, str | None, bool] | None | str] = []
    after_dashes = False
    for tok in tokens:
        if after_dashes:
            kinds.append(None)
        elif tok.text == "--":
            kinds.append("--")
            after_dashes = True
        else:
            try:
                kinds.append(resolver.resolve(tok.text))
            except _Ambiguous as exc:
                out.error("ambiguous-option", str(exc), tok.written, "write the full option name")
                return out
    i = 0
    while i < len(tokens):
        kind = kinds[i]
        if kind is None or kind == "--":
            if kind is None:
                out.positionals.append(tokens[i].text)
            i += 1
            continue
        name, spec, explicit, via_prefix = kind  # type: ignore[misc]
        i = _consume(out, tokens, kinds, i, name, spec, explicit, via_prefix)
    return out


def _following_values(kinds: list[Any], start: int) -> int:
    count = 0
    while start + count < len(kinds) and kinds[start + count] is None:
        count += 1
    return count


def _consume(out: Scan, tokens: list[_Token], kinds: list[Any], i: int, name: str,
             spec: FlagSpec | None, explicit: str | None, via_prefix: bool) -> int:
    tok = tokens[i]
    if spec is None:
        out.findings.append(Finding("error", "unknown-option", f"unrecognized option {tok.written}", tok.written))
        # its value (if it has one) is part of the same mistake, not a second one
        return i + 1 + min(_following_values(kinds, i + 1), 0 if "=" in tok.text else 1)
    nargs = spec.nargs if spec.takes_value else 0
    if explicit is not None:
        if nargs == 0:
            out.error("unexpected-value", f"{name} takes no value (got {explicit!r})", tok.written,
                      f"write {name} alone" + (f" or {spec.negation}" if spec.negation else ""))
            return i + 1
        values: tuple[str, ...] = (explicit,)
        end = i + 1
    else:
        available = _following_values(kinds, i + 1)
        wanted = _take(nargs, available)
        if wanted is None:
            need = "at least one value" if nargs == "+" else (
                f"{nargs} values" if isinstance(nargs, int) else "a value")
            out.error("missing-value", f"{name} needs {need}", tok.written)
            return i + 1 + available
        values = tuple(t.text for t in tokens[i + 1:i + 1 + wanted])
        end = i + 1 + wanted
    out.occurrences.append(Occurrence(
        spec=spec, written=tok.written, option=name, values=values,
        negated=name == spec.negation, via_prefix=via_prefix, from_dotted=tok.dotted,
    ))
    return end


def _take(nargs: str | int | None, available: int) -> int | None:
    if nargs is None:
        return 1 if available >= 1 else None
    if nargs == "?":
        return min(available, 1)
    if nargs == "*":
        return available
    if nargs == "+":
        return available if available >= 1 else None
    if isinstance(nargs, int):
        return nargs if available >= nargs else None
    return 1 if available >= 1 else None


# ---------------------------------------------------------------- click (MAX)


def _scan_click(catalog: FlagCatalog, args: list[str]) -> Scan:
    out = Scan()
    index = {o: s for s in catalog.flags for o in s.option_strings()}
    for opt in HELP.option_strings():
        index.setdefault(opt, HELP)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            out.positionals.extend(args[i + 1:])
            break
        if not arg.startswith("-") or len(arg) == 1:
            out.positionals.append(arg)
            i += 1
            continue
        name, eq, explicit = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        spec = index.get(name)
        if spec is None:
            out.error("unknown-option", f"no such option {name}", name)
            value_follows = not eq and i + 1 < len(args) and not args[i + 1].startswith("-")
            i += 2 if value_follows else 1
            continue
        if not spec.takes_value:
            if eq:
                out.error("unexpected-value", f"{name} takes no value (got {explicit!r})", name,
                          f"write {name} alone" + (f" or {spec.negation}" if spec.negation else ""))
            else:
                out.occurrences.append(Occurrence(spec, arg, name, (), negated=name == spec.negation))
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
    return out
