"""Read a vLLM launch argv into its parts: program words, model, and options in order.

Accepts ``vllm serve MODEL ...``, ``python -m vllm.entrypoints.openai.api_server --model M ...``
and a bare option list. Options are normalised to their dashed long form (``--max_model_len``
and ``-tp`` read as ``--max-model-len`` and ``--tensor-parallel-size``); ``--flag=value`` splits.
Whether an option takes a value comes from the stored vLLM flag catalog when there is one, and
otherwise from the shape of the argv (a following token that is not an option is its value).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from servekit.errors import ServekitError

SHORT_ALIASES = {
    "-tp": "--tensor-parallel-size",
    "-pp": "--pipeline-parallel-size",
    "-dp": "--data-parallel-size",
    "-q": "--quantization",
    "-O": "--compilation-config",
}

# Options that never take a value, for when no flag catalog is stored.
_SWITCHES = frozenset(
    {
        "--trust-remote-code",
        "--enforce-eager",
        "--enable-prefix-caching",
        "--enable-chunked-prefill",
        "--enable-lora",
        "--enable-auto-tool-choice",
        "--enable-expert-parallel",
        "--disable-log-requests",
        "--disable-log-stats",
        "--enable-log-requests",
        "--async-scheduling",
        "--language-model-only",
        "--enable-mm-embeds",
        "--headless",
        "--enable-eplb",
        "--enable-dbo",
        "--skip-tokenizer-init",
        "--disable-custom-all-reduce",
        "--enable-sleep-mode",
        "--enable-prompt-embeds",
        "--disable-cascade-attn",
        "--enable-return-routed-experts",
        "--enable-force-include-usage",
        "--enable-server-load-tracking",
        "--disable-fastapi-docs",
        "--enable-request-id-headers",
        "--disable-frontend-multiprocessing",
        "--enable-tokenizer-info-endpoint",
        "--enable-lora-bias",
    }
)

_PROGRAM_FORMS = (
    ("vllm", "serve"),
    ("python", "-m", "vllm.entrypoints.openai.api_server"),
    ("python3", "-m", "vllm.entrypoints.openai.api_server"),
)


# Options that take one or more values (argparse nargs="+"), for when no catalog is stored.
_MULTI_VALUED = frozenset({"--lora-modules", "--served-model-name", "--middleware", "--allowed-origins"})

# vLLM's human-readable integers: decimal k/m/g/t, binary K/M/G/T.
_HUMAN = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


@dataclass(frozen=True)
class Option:
    flag: str  # normalised: "--max-model-len"
    values: tuple[str, ...]  # () for a switch; one item for most options
    given: str  # the option as written

    @property
    def value(self) -> str | None:
        return " ".join(self.values) if self.values else None


@dataclass(frozen=True)
class VllmLaunch:
    program: tuple[str, ...]
    model: str | None
    options: tuple[Option, ...]

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


def normalise_flag(token: str) -> str:
    if token in SHORT_ALIASES:
        return SHORT_ALIASES[token]
    if token.startswith("--"):
        return "--" + token[2:].replace("_", "-")
    return token


def parse_vllm_argv(argv: Sequence[str]) -> VllmLaunch:
    """Split a vLLM launch; a malformed one raises a ServekitError naming the token."""
    tokens = list(argv)
    program: tuple[str, ...] = ()
    for form in _PROGRAM_FORMS:
        if tuple(tokens[: len(form)]) == form:
            program = form
            tokens = tokens[len(form) :]
            break
    model: str | None = None
    if program[:2] == ("vllm", "serve") and tokens and not tokens[0].startswith("-"):
        model = tokens.pop(0)
    options: list[Option] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not looks_like_option(token):
            if model is None:
                model = token
                i += 1
                continue
            raise ServekitError(
                f"unexpected word {token!r} in the vLLM command",
                fix="give the model once, as the first word after 'vllm serve' or with --model",
            )
        if token.startswith("--") and " " in token and "=" not in token.split(" ", 1)[0]:
            token = token.replace(" ", "=", 1)  # one word holding "--flag value"
        given, _, inline = token.partition("=")
        if token.startswith("-O") and not token.startswith("--") and len(token) > 2 and "=" not in token:
            given, inline = "-O", token[2:]  # -O3 / -O.cudagraph_mode=...
        flag = normalise_flag(given)
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if inline or "=" in token:
            values: tuple[str, ...] = (inline,)
            i += 1
        elif _multi_valued(flag):
            j = i + 1
            while j < len(tokens) and not looks_like_option(tokens[j]):
                j += 1
            values = tuple(tokens[i + 1 : j])
            i = j
        elif _takes_value(flag, following):
            values = (following,)
            i += 2
        else:
            values = ()
            i += 1
        if flag == "--model" and values:
            model = values[0]
            continue
        options.append(Option(flag=flag, values=values, given=given))
    return VllmLaunch(program=program, model=model, options=tuple(options))


def _multi_valued(flag: str) -> bool:
    catalog = _vllm_catalog()
    spec = catalog.get(flag) if catalog is not None else None
    if spec is not None:
        return spec.nargs in ("+", "*")
    return flag in _MULTI_VALUED


def _takes_value(flag: str, following: str | None) -> bool:
    spec_says = _catalog_takes_value(flag)
    if spec_says is not None:
        return spec_says and following is not None
    if flag in _SWITCHES or flag.startswith("--no-"):
        return False
    return following is not None and not looks_like_option(following)


@lru_cache(maxsize=None)
def _catalog_takes_value(flag: str) -> bool | None:
    catalog = _vllm_catalog()
    if catalog is None:
        return None
    spec = catalog.get(flag)
    if spec is None:
        return None
    if spec.negation == flag:
        return False
    return spec.takes_value


@lru_cache(maxsize=1)
def _vllm_catalog():
    from servekit.engines.flags import load_catalog

    try:
        return load_catalog("vllm")
    except ServekitError:
        return None


def human_readable_int(text: str) -> int:
    """``1k`` = 1000, ``1K`` = 1024, ``25.6k`` = 25600; plain integers as themselves."""
    value = text.strip()
    match = _HUMAN.fullmatch(value)
    if match:
        number, suffix = match.groups()
        if suffix in _DECIMAL:
            return int(float(number) * _DECIMAL[suffix])
        if "." in number:
            raise ValueError(f"decimals are not allowed with binary suffix {suffix}")
        return int(number) * _BINARY[suffix]
    return int(value)


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


def looks_like_option(token: str) -> bool:
    """``--flag`` / ``-x`` start an option; ``-1`` or ``-0.5`` are values."""
    return token.startswith("-") and not _is_number(token)


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True
