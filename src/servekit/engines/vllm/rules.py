"""Checks ``vllm serve`` makes on its parsed arguments before it loads anything.

They follow vLLM 0.32's and 0.33's serve-argument validation (``validate_parsed_serve_args`` and what it
calls) and its ``--lora-modules`` reader; tests/engines/test_lint_agreement.py holds lint to the
real functions. Each rule reads the winning value of each option (``Values``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import FlagCatalog
from servekit.engines.common.scan import Occurrence
from servekit.engines.common.startup import final_values, is_shell_reference
from servekit.engines.common.valuecheck import lora_module_problem
from servekit.engines.vllm.versions import renamed_spelling_findings
from servekit.records import record


@record
class Values:
    """The winning value of each option, by destination name."""

    final: dict[str, Occurrence]
    env: dict[str, str]

    def on(self, dest: str) -> bool:
        occ = self.final.get(dest)
        return occ is not None and not occ.negated and (not occ.spec.takes_value or bool(occ.values))

    def text(self, dest: str) -> str | None:
        occ = self.final.get(dest)
        return occ.values[-1] if occ is not None and occ.values else None

    def number(self, dest: str, default: int | None = None) -> int | None:
        text = self.text(dest)
        if text is None or is_shell_reference(text):
            return default
        try:
            return int(text)
        except ValueError:
            return default


Rule = Callable[[Values], list[Finding]]


def _error(code: str, message: str, option: str, fix: str | None = None) -> Finding:
    return Finding("error", code, message, fix, location=option)


def grpc_port(values: Values) -> list[Finding]:
    if values.text("grpc_port") is None:
        return []
    if values.on("grpc"):
        return [_error("conflicting-options", "--grpc and --grpc-port cannot be used together", "--grpc-port")]
    if values.env.get("VLLM_USE_RUST_FRONTEND") != "1":
        return [_error("missing-requirement", "--grpc-port needs the Rust frontend: VLLM_USE_RUST_FRONTEND=1",
                       "--grpc-port", "prefix the command with VLLM_USE_RUST_FRONTEND=1")]
    return []


def keep_alive(values: Values) -> list[Finding]:
    interval = values.number("sse_keep_alive_interval", 0)
    if interval is not None and interval < 0:
        return [_error("bad-value", "--sse-keep-alive-interval must be 0 (off) or positive",
                       "--sse-keep-alive-interval")]
    return []


def per_request_metrics(values: Values) -> list[Finding]:
    if values.on("enable_per_request_metrics") and values.on("disable_log_stats"):
        return [_error("conflicting-options", "--enable-per-request-metrics needs engine statistics; "
                       "--disable-log-stats turns them off", "--enable-per-request-metrics",
                       "drop --disable-log-stats")]
    return []


def multi_port_external_lb(values: Values) -> list[Finding]:
    if not values.on("data_parallel_multi_port_external_lb"):
        return []
    option = "--data-parallel-multi-port-external-lb"
    problems = []
    if values.on("grpc") or values.text("uds") is not None:
        problems.append("does not work with --grpc or --uds")
    if values.number("api_server_count") not in (None, 1):
        problems.append("needs --api-server-count 1")
    if values.text("data_parallel_rank") is not None:
        problems.append("sets --data-parallel-rank itself")
    if values.on("data_parallel_external_lb") or values.on("data_parallel_hybrid_lb"):
        problems.append("cannot be combined with --data-parallel-external-lb or --data-parallel-hybrid-lb")
    size = values.number("data_parallel_size", 1) or 1
    local = values.number("data_parallel_size_local")
    if size < 2:
        problems.append("needs --data-parallel-size > 1")
    elif local is None or local < 2:
        problems.append("needs --data-parallel-size-local >= 2")
    elif local > size or size % local:
        problems.append("needs --data-parallel-size to be a multiple of --data-parallel-size-local")
    return [_error("bad-combination", f"{option} {p}", option) for p in problems[:1]]


def lora_modules(catalog: FlagCatalog) -> Rule:
    fields = catalog.registries.get("lora_module_fields", ())
    required = catalog.registries.get("lora_module_required", ())

    def rule(values: Values) -> list[Finding]:
        occ = values.final.get("lora_modules")
        if occ is None:
            return []
        for item in occ.values:
            problem = lora_module_problem(item, fields, required)
            if problem:
                return [_error("bad-value", f"--lora-modules: {problem}", "--lora-modules",
                               'write NAME=PATH or \'{"name": "...", "path": "..."}\'')]
        return []

    return rule


def serve_rule_findings(catalog: FlagCatalog, occurrences: Sequence[Occurrence],
                        env: dict[str, str]) -> list[Finding]:
    values = Values(final_values(occurrences), env)
    rules: list[Rule] = [grpc_port, keep_alive, per_request_metrics, multi_port_external_lb, lora_modules(catalog)]
    found = [finding for rule in rules for finding in rule(values)]
    return found + renamed_spelling_findings(catalog, occurrences)
