"""Modular MAX from a vLLM launch: the ``max serve`` argv, the ``max warm-cache`` argv (same
pipeline options, minus the HTTP ones, plus ``--target`` when asked) and the vLLM options MAX
cannot express.

Context options (``DialectContext.options``): ``target`` ("cuda:sm_90", "hip:gfx942", or
"auto" to derive it from the hardware), ``devices`` (explicit GPU ids, or "cpu"), ``precision``
(the variant's precision, used when the argv names no encoding), ``version`` of MAX.
"""

from __future__ import annotations

from collections.abc import Sequence

from servekit.engines.common.findings import Finding
from servekit.engines.common.translation import DialectContext, Untranslated, unique_findings
from servekit.engines.max.options import translate_options
from servekit.engines.max.rules import validate_max_argv
from servekit.engines.max.targets import hardware_findings, resolve_target
from servekit.engines.max.vocab import SERVE_ONLY
from servekit.engines.vllm.launch import parse_vllm_argv
from servekit.records import record


@record
class MaxTranslation:
    argv: tuple[str, ...]
    warm_cache_argv: tuple[str, ...]
    untranslated: tuple[Untranslated, ...]
    findings: tuple[Finding, ...]


def translate_to_max(vllm_argv: Sequence[str], context: DialectContext | None = None) -> MaxTranslation:
    context = context or DialectContext()
    build = translate_options(parse_vllm_argv(vllm_argv), context)
    findings = list(build.findings)
    pipeline = [(f, v) for f, v in build.options if f not in SERVE_ONLY]
    warm = ["max", "warm-cache", *_flatten(pipeline)]
    target, target_findings = resolve_target(context)
    findings += target_findings + hardware_findings(context)
    if target:
        warm += ["--target", target]
    argv = ("max", "serve", *_flatten(build.options))
    findings += validate_max_argv(argv, context)
    findings += validate_max_argv(warm, context)
    return MaxTranslation(argv, tuple(warm), tuple(build.untranslated), tuple(unique_findings(findings)))


def _flatten(options: list[tuple[str, str | None]]) -> list[str]:
    out: list[str] = []
    for flag, value in options:
        out.append(flag)
        if value is not None:
            out.append(value)
    return out
