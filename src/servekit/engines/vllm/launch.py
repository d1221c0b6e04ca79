"""The one reader of vLLM command lines: program words, model, and options in order.

Accepts ``vllm serve MODEL ...``, ``python -m vllm.entrypoints.openai.api_server --model M ...``
and a bare option list. Every option is read through vLLM's stored flag catalog, as vLLM's own
parser reads it: underscores become dashes, ``-O3`` is ``--optimization-level 3``, aliases
(``-tp``, ``-q``, ``--device-memory-utilization``) become the option's name, a unique prefix of a
long option names that option, and whether an option takes one value, several or none (a
switch, or its ``--no-`` negation) comes from the catalog. An option the catalog does not know
takes a value when the next word is not an option.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from servekit.engines.common.command_line import looks_like_option
from servekit.engines.common.flags import FlagCatalog, FlagSpec
from servekit.engines.common.numbers import human_readable_int
from servekit.engines.vllm.catalog import serve_catalog
from servekit.errors import ServekitError
from servekit.records import record

_PROGRAM_FORMS = (
    ("vllm", "serve"),
    ("python", "-m", "vllm.entrypoints.openai.api_server"),
    ("python3", "-m", "vllm.entrypoints.openai.api_server"),
)
MODEL_OPTION = "--model"


@record
class Option:
    """One option of a ``vllm serve`` command line and the values it took."""

    flag: str  # normalised: "--max-model-len"
    values: tuple[str, ...]  # () for a switch; one item for most options
    given: str  # the option as written

    @property
    def value(self) -> str | None:
        return " ".join(self.values) if self.values else None


@record
class VllmLaunch:
    """A ``vllm serve`` command line, parsed: the program, the model and its options in order."""

    program: tuple[str, ...]
    model: str | None
    options: tuple[Option, ...]
    extras: tuple[str, ...] = ()  # words no option took (kept only when not strict)

    def values(self, flag: str) -> list[str]:
        """Every value of every occurrence of ``flag``, in order."""
        return [value for opt in self.options if opt.flag == flag for value in opt.values]

    def has(self, flag: str) -> bool:
        return any(o.flag == flag for o in self.options)

    def get(self, flag: str, default: str | None = None) -> str | None:
        """The value of the last occurrence of ``flag`` (argparse semantics)."""
        for opt in reversed(self.options):
            if opt.flag == flag:
                return opt.values[-1] if opt.values else None
        return default

    def get_int(self, flag: str, default: int | None = None) -> int | None:
        text = self.get(flag)
        if text is None:
            return default
        try:
            return int(text)
        except ValueError:
            raise ServekitError(f"{flag} {text!r} is not an integer", fix=f"pass a whole number to {flag}") from None

    def get_length(self, flag: str) -> int | None:
        """A token count in vLLM's human-readable form; None when absent or left to vLLM (``auto``, ``-1``)."""
        text = self.get(flag)
        return None if text is None else parse_length(text, flag)

    def get_json(self, flag: str) -> Any:
        """The parsed JSON value of ``flag`` (None when absent)."""
        text = self.get(flag)
        if text is None:
            return None
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ServekitError(
                f"{flag} is not valid JSON: {exc}", fix=f"quote {flag} as one shell word holding a JSON object"
            ) from None

    def switch(self, flag: str) -> bool | None:
        """True for ``--flag``, False for ``--no-flag``, None when neither is given (last wins)."""
        negation = "--no-" + flag[2:]
        for opt in reversed(self.options):
            if opt.flag == flag:
                return not opt.values or opt.values[-1].lower() not in ("false", "0")
            if opt.flag == negation:
                return False
        return None


def parse_vllm_argv(argv: Sequence[str], *, strict: bool = True, catalog: FlagCatalog | None = None) -> VllmLaunch:
    """Split a vLLM launch; a malformed one raises a ServekitError naming the token.

    With ``strict=False`` words that no option takes are kept in ``extras`` instead.
    """
    reader = _Reader(catalog or serve_catalog())
    tokens = list(argv)
    program: tuple[str, ...] = ()
    for form in _PROGRAM_FORMS:
        if tuple(tokens[: len(form)]) == form:
            program = form
            tokens = tokens[len(form) :]
            break
    model: str | None = None
    if program[:2] == ("vllm", "serve") and tokens and not looks_like_option(tokens[0]):
        model = tokens.pop(0)
    options: list[Option] = []
    extras: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not looks_like_option(token):
            if model is None:
                model = token
            elif strict:
                raise ServekitError(
                    f"unexpected word {token!r} in the vLLM command",
                    fix="give the model once, as the first word after 'vllm serve' or with --model",
                )
            else:
                extras.append(token)
            i += 1
            continue
        option, i = reader.read(tokens, i)
        if option.flag == MODEL_OPTION and option.values:
            model = option.values[0]
            continue
        options.append(option)
    return VllmLaunch(program=program, model=model, options=tuple(options), extras=tuple(extras))


class _Reader:
    """Reads one option at a time, the way vLLM's parser classes and consumes words."""

    def __init__(self, catalog: FlagCatalog) -> None:
        self.catalog = catalog

    def read(self, tokens: list[str], i: int) -> tuple[Option, int]:
        token = tokens[i]
        if token.startswith("--") and " " in token and "=" not in token.split(" ", 1)[0]:
            token = token.replace(" ", "=", 1)  # one word holding "--flag value"
        given, eq, inline = token.partition("=")
        if given.startswith("-O") and not given.startswith("--"):
            return self._optimization_level(tokens, i, token)
        flag, spec = self.resolve(given)
        if eq:
            return Option(flag, (inline,), given), i + 1
        if spec is not None and spec.is_negation(flag):
            return Option(flag, (), given), i + 1
        if spec is not None and spec.nargs in ("+", "*"):
            j = i + 1
            while j < len(tokens) and not looks_like_option(tokens[j]):
                j += 1
            return Option(flag, tuple(tokens[i + 1 : j]), given), j
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        takes = spec.takes_value if spec is not None else True
        if takes and following is not None and not looks_like_option(following):
            return Option(flag, (following,), given), i + 2
        return Option(flag, (), given), i + 1  # a switch, or an option whose value is missing

    def resolve(self, given: str) -> tuple[str, FlagSpec | None]:
        """The option's name (or its negation) and its catalog entry, when the catalog has one."""
        name = normalise_flag(given)
        option = name if self.catalog.get(name) is not None else self._by_prefix(name)
        spec = self.catalog.get(option) if option is not None else None
        if spec is None:
            return name, None
        return (spec.negation if spec.is_negation(option) else spec.name), spec

    def _by_prefix(self, name: str) -> str | None:
        """The one long option ``name`` abbreviates, when the parser allows abbreviations."""
        if not (self.catalog.allow_abbrev and name.startswith("--")):
            return None
        found = [option for option in self.catalog.names() if option.startswith(name)]
        return found[0] if len(found) == 1 else None

    @staticmethod
    def _optimization_level(tokens: list[str], i: int, token: str) -> tuple[Option, int]:
        """vLLM reads ``-O3`` / ``-O=3`` / ``-O 3`` as ``--optimization-level 3``."""
        level = token[3:] if token[2:3] == "=" else token[2:]
        if level:
            return Option("--optimization-level", (level,), "-O"), i + 1
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if following is not None and not looks_like_option(following):
            return Option("--optimization-level", (following,), "-O"), i + 2
        return Option("--optimization-level", (), "-O"), i + 1


def normalise_flag(token: str) -> str:
    """A long option with dashes for underscores; short options as written."""
    if token.startswith("--"):
        return "--" + token[2:].replace("_", "-")
    return token


def parse_token_count(text: str, flag: str = "--max-model-len") -> int:
    """vLLM's human-readable lengths: ``32768``, ``32k`` (x1000), ``32K`` (x1024), ``1m`` / ``1M``."""
    try:
        return human_readable_int(text)
    except ValueError:
        raise ServekitError(f"{flag} {text!r} is not a length", fix="pass a token count such as 32768") from None


def parse_length(text: str, flag: str = "--max-model-len") -> int | None:
    """A token count, or None when the length is left to vLLM (``auto``, ``-1``)."""
    if text.strip().lower() in ("auto", "-1"):
        return None
    return parse_token_count(text, flag)
