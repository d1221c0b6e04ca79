"""Read a vLLM option list exactly as vLLM's parser does, from the stored catalog alone.

Two stages, as in vLLM:

1. vLLM's own rewriting (``FlexibleArgumentParser.parse_args``): underscores become dashes in
   option names, ``-O3`` becomes ``--optimization-level 3``, and dotted options
   (``--compilation-config.mode 3``, ``--x.list+ a,b``) are merged into one JSON value that is
   appended at the end.
2. Python 3.11 argparse: each word is classed as an option (exact name, ``--opt=value``, a unique
   prefix of a long option, or a single-dash prefix), a value, or ``--``; options take values by
   their nargs pattern; the positionals (vLLM: one optional model) take what is left between
   options; whatever is still left is "unrecognized".
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from servekit.engines.common.flags import FlagCatalog, FlagSpec
from servekit.engines.common.scan_result import HELP, Occurrence, Scan
from servekit.engines.common.numbers import human_readable_int
from servekit.records import record

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
_NAME_PART = re.compile(r"(?<=--)[^.]*")
# argparse's regular expressions over the word classes (A = value, O = option, - = "--");
# an option's values may not include "--" (argparse drops the dashes from its patterns)
_POSITIONAL_OPTIONAL = "(-*A?-*)"
_OPTION_NARGS = {None: "(A)", "?": "(A?)", "*": "([A]*)", "+": "(A[A]*)", 0: "()"}


@record
class _Token:
    """One word of the command line, after the engine's own rewriting (``text``) and as written."""

    text: str
    written: str
    dotted: bool = False


@record
class _Option:
    """An option word matched to its flag (None: unknown), with the value written in it, if any."""

    name: str
    spec: FlagSpec | None
    explicit: str | None
    via_prefix: bool


# ------------------------------------------------------------------ stage 1: vLLM's rewriting


def rewrite(args: list[str], out: Scan) -> list[_Token]:
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
    """Deep-merge like vLLM (lists extend, dicts merge, else overwrite); returns overwritten keys."""
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


# ------------------------------------------------------------------ stage 2: argparse


class _Ambiguous(Exception):
    pass


class _Classifier:
    """argparse's ``_parse_optional``: which option a word names, if any."""

    def __init__(self, catalog: FlagCatalog) -> None:
        self.index: dict[str, FlagSpec] = {o: s for s in catalog.flags for o in s.option_strings()}
        for opt in HELP.option_strings():
            self.index.setdefault(opt, HELP)
        self.allow_abbrev = catalog.allow_abbrev

    def classify(self, arg: str) -> _Option | None:
        if not arg or arg[0] != "-":
            return None
        if arg in self.index:
            return _Option(arg, self.index[arg], None, False)
        if len(arg) == 1:
            return None
        if "=" in arg:
            name, value = arg.split("=", 1)
            if name in self.index:
                return _Option(name, self.index[name], value, False)
        matches = self._prefix_matches(arg)
        if len(matches) > 1:
            raise _Ambiguous(f"ambiguous option: {arg} could match {', '.join(m[0] for m in matches)}")
        if len(matches) == 1:
            name, value = matches[0]
            return _Option(name, self.index[name], value, True)
        if _NEGATIVE_NUMBER.match(arg) or " " in arg:
            return None
        return _Option(arg, None, None, False)

    def _prefix_matches(self, arg: str) -> list[tuple[str, str | None]]:
        if arg[1] == "-":
            if not self.allow_abbrev:
                return []
            prefix, eq, value = arg.partition("=")
            return [(o, value if eq else None) for o in self.index if o.startswith(prefix)]
        out: list[tuple[str, str | None]] = []
        for opt in self.index:
            if opt == arg[:2]:
                out.append((opt, arg[2:]))
            elif opt.startswith(arg):
                out.append((opt, None))
        return out


class _Parser:
    """argparse's ``_parse_known_args`` loop over classified words."""

    def __init__(self, catalog: FlagCatalog, tokens: list[_Token], out: Scan) -> None:
        self.catalog, self.tokens, self.out = catalog, tokens, out
        self.kinds: list[_Option | str | None] = []
        self.positionals = list(catalog.positionals)
        self.extras: list[int] = []
        self.after_unknown: set[int] = set()

    def classify_all(self) -> bool:
        classifier = _Classifier(self.catalog)
        after_dashes = False
        for tok in self.tokens:
            if after_dashes:
                self.kinds.append(None)
            elif tok.text == "--":
                self.kinds.append("--")
                after_dashes = True
            else:
                try:
                    self.kinds.append(classifier.classify(tok.text))
                except _Ambiguous as exc:
                    self.out.error("ambiguous-option", str(exc), tok.written, "write the full option name")
                    return False
        return True

    @property
    def pattern(self) -> str:
        return "".join("O" if isinstance(k, _Option) else "-" if k == "--" else "A" for k in self.kinds)

    def run(self) -> None:
        option_indices = [i for i, k in enumerate(self.kinds) if isinstance(k, _Option)]
        start = 0
        while option_indices and start <= option_indices[-1]:
            next_option = min(i for i in option_indices if i >= start)
            if start != next_option:
                end = self.consume_positionals(start)
                if end > start:
                    start = end
                    continue
            if start not in option_indices:
                self.extras += range(start, next_option)
                start = next_option
            start = self.consume_optional(start)
        stop = self.consume_positionals(start)
        self.extras += range(stop, len(self.tokens))
        self.report_extras()

    def consume_positionals(self, start: int) -> int:
        if not self.positionals:
            return start
        match = re.match(_POSITIONAL_OPTIONAL, self.pattern[start:])
        count = len(match.group(1)) if match else 0
        self.positionals.pop(0)
        words = _drop_first_dashes([t.text for t in self.tokens[start:start + count]])
        self.out.positionals.extend(words)
        return start + count

    def consume_optional(self, start: int) -> int:
        option = self.kinds[start]
        assert isinstance(option, _Option)
        tok = self.tokens[start]
        if option.spec is None:
            self.out.error("unknown-option", f"unrecognized option {tok.written}", tok.written)
            self.after_unknown.add(start + 1)
            return start + 1
        spec = option.spec
        nargs = spec.nargs if spec.takes_value else 0
        if option.explicit is not None:
            if nargs == 0 or (isinstance(nargs, int) and nargs > 1):
                self.out.error("unexpected-value", f"{option.name} takes no value (got {option.explicit!r})",
                               tok.written, _no_value_fix(spec, option.name))
                return start + 1
            self.record(option, tok, [option.explicit])
            return start + 1
        regex = _OPTION_NARGS.get(nargs) or f"({'A' * int(nargs)})"  # type: ignore[arg-type]
        match = re.match(regex, self.pattern[start + 1:])
        if match is None:
            need = "at least one value" if nargs == "+" else (
                f"{nargs} values" if isinstance(nargs, int) else "a value")
            self.out.error("missing-value", f"{option.name} needs {need}", tok.written)
            return start + 1
        count = len(match.group(1))
        self.record(option, tok, [t.text for t in self.tokens[start + 1:start + 1 + count]])
        return start + 1 + count

    def record(self, option: _Option, tok: _Token, words: list[str]) -> None:
        spec = option.spec
        assert spec is not None
        if words == ["--"] and spec.takes_value and spec.nargs is None:
            self.out.warn("empty-value", f"{option.name}: argparse drops a '--' value, leaving an empty list "
                          "where the engine expects a value", tok.written, "give a real value")
        self.out.occurrences.append(Occurrence(
            spec=spec, written=tok.written, option=option.name, values=tuple(_drop_first_dashes(words)),
            negated=spec.is_negation(option.name), via_prefix=option.via_prefix, from_dotted=tok.dotted,
        ))

    def report_extras(self) -> None:
        # the value right after an unknown option belongs to that mistake; do not report it twice
        for i in self.extras:
            if i in self.after_unknown or isinstance(self.kinds[i], _Option):
                continue
            self.out.extras.append(self.tokens[i].text)


def _drop_first_dashes(words: list[str]) -> list[str]:
    """argparse removes the first ``--`` from the words an argument receives."""
    if "--" in words:
        words = list(words)
        words.remove("--")
    return words


def _no_value_fix(spec: FlagSpec, name: str) -> str:
    return f"write {name} alone" + (f" or {spec.negation}" if spec.negation else "")


def scan_argparse(catalog: FlagCatalog, args: list[str]) -> Scan:
    out = Scan()
    tokens = rewrite(args, out)
    parser = _Parser(catalog, tokens, out)
    if parser.classify_all():
        parser.run()
    return out
