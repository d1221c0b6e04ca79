"""SGLang from a vLLM launch: ``python -m sglang.launch_server --model-path ...`` and every vLLM
option it could not carry, with the reason.

Parallelism: TP -> ``--tp-size``, PP -> ``--pp-size``; DP alone -> ``--dp-size`` (replicas);
DP with expert parallelism (vLLM's attention-DP + EP for MoE models) -> one TP group of
``tp x dp`` ranks with ``--attn-dp-size dp`` and ``--ep-size tp x dp``; EP alone -> ``--ep-size tp``.
Multi-node: ``--nnodes`` / ``--node-rank`` / ``--dist-init-addr HOST:PORT``. Prefill/decode
disaggregation: ``kv_transfer_config.kv_role`` -> ``--disaggregation-mode``, its connector ->
``--disaggregation-transfer-backend``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from servekit.engines.common.findings import NOTE, WARNING, Finding, finding
from servekit.engines.common.flags import FlagCatalog
from servekit.engines.common.translation import Untranslated
from servekit.engines.sglang import vocab
from servekit.engines.sglang.specs import MODULE
from servekit.engines.vllm.launch import VllmLaunch, parse_vllm_argv

GENERIC_REASON = "SGLang has no counterpart for this vLLM option"
HANDLED = frozenset({
    "--tensor-parallel-size", "--data-parallel-size", "--enable-expert-parallel", "--speculative-config",
    "--tool-call-parser", "--reasoning-parser", "--kv-cache-dtype", "--enable-prefix-caching",
    "--no-enable-prefix-caching", "--kv-transfer-config", "--master-addr", "--lora-modules", "--data-parallel-address",
    "--max-model-len",
})


@dataclass
class Build:
    catalog: FlagCatalog
    args: list[str] = field(default_factory=list)
    untranslated: list[Untranslated] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def add(self, flag: str, value: str | None = None) -> None:
        self.args += [flag] if value is None else [flag, value]

    def drop(self, flag: str, value: str | None, reason: str) -> None:
        self.untranslated.append(Untranslated(flag, value, reason))

    def choice(self, flag: str, value: str, source: str) -> None:
        """``flag value`` when SGLang's catalog accepts the value, else not carried over."""
        spec = self.catalog.get(flag)
        if spec is not None and spec.choices is not None and value not in spec.choices:
            self.drop(source, value, f"SGLang's {flag} has no {value!r} (it takes {', '.join(spec.choices[:12])})")
        else:
            self.add(flag, value)


def translate_to_sglang(vllm_argv: Sequence[str], catalog: FlagCatalog) -> Build:
    launch = parse_vllm_argv(vllm_argv, strict=False)
    build = Build(catalog)
    build.add("--model-path", launch.model or "")
    _parallel(launch, build)
    _options(launch, build)
    _parsers(launch, build)
    _speculative(launch, build)
    _disaggregation(launch, build)
    _multi_node(launch, build)
    return build


def command(build: Build) -> tuple[str, ...]:
    return ("python", "-m", MODULE, *build.args)


def _parallel(launch: VllmLaunch, build: Build) -> None:
    tp = launch.get_int("--tensor-parallel-size", 1) or 1
    dp = launch.get_int("--data-parallel-size", 1) or 1
    ep = bool(launch.switch("--enable-expert-parallel"))
    if ep and dp > 1:
        build.add("--tp-size", str(tp * dp))
        build.add("--attn-dp-size", str(dp))
        build.add("--ep-size", str(tp * dp))
        build.findings.append(finding(NOTE, "sglang.dp-attention",
                                      f"vLLM's {dp} data-parallel ranks with expert parallelism become one SGLang "
                                      f"TP group of {tp * dp} with {dp} attention-DP groups and EP {tp * dp}"))
        return
    if tp > 1:
        build.add("--tp-size", str(tp))
    if dp > 1:
        build.add("--dp-size", str(dp))
    if ep and tp > 1:
        build.add("--ep-size", str(tp))


def _options(launch: VllmLaunch, build: Build) -> None:
    for option in launch.options:
        flag, value = option.flag, (option.values[-1] if option.values else None)
        if flag in HANDLED or flag.startswith("--speculative-config."):
            continue
        if flag in vocab.SWITCHES:
            if launch.switch(flag):
                build.add(vocab.SWITCHES[flag])
        elif flag in vocab.RENAMED and value is not None:
            target = vocab.RENAMED[flag]
            build.choice(target, value, flag) if flag in ("--quantization", "--dtype", "--load-format") \
                else build.add(target, value)
        else:
            build.drop(flag, value, vocab.NO_EQUIVALENT.get(flag, GENERIC_REASON))
    if launch.has("--gpu-memory-utilization"):
        build.findings.append(finding(NOTE, "sglang.mem-fraction",
                                      "--mem-fraction-static counts weights and the KV pool only; activations and "
                                      "CUDA graphs live outside it, unlike vLLM's --gpu-memory-utilization"))
    if launch.has("--max-model-len"):
        length = launch.get_length("--max-model-len")
        if length is None:
            build.drop("--max-model-len", launch.get("--max-model-len"),
                       "SGLang reads the context length from the model config when --context-length is not given")
        else:
            build.add("--context-length", str(length))  # vLLM's 32k / 32K as the integer SGLang parses
    kv = launch.get("--kv-cache-dtype")
    if kv is not None:
        build.choice("--kv-cache-dtype", vocab.KV_CACHE_DTYPES.get(kv, kv), "--kv-cache-dtype")
    if launch.switch("--enable-prefix-caching") is False:
        build.add("--disable-radix-cache")
    for item in launch.values("--lora-modules"):
        build.add("--lora-paths", item)


def _parser_name(build: Build, flag: str, value: str, table: dict[str, str], registry: str) -> None:
    names = build.catalog.registries.get(registry, ())
    name = value if value in names else table.get(value)
    if name is None or (names and name not in names):
        build.drop(flag, value, f"SGLang has no {flag} for vLLM's {value!r} format")
    else:
        build.add(flag, name)


def _parsers(launch: VllmLaunch, build: Build) -> None:
    tool = launch.get("--tool-call-parser")
    if tool:
        _parser_name(build, "--tool-call-parser", tool, vocab.TOOL_CALL_PARSERS, "tool_call_parsers")
    reasoning = launch.get("--reasoning-parser")
    if reasoning:
        _parser_name(build, "--reasoning-parser", reasoning, vocab.REASONING_PARSERS, "reasoning_parsers")


def _speculative(launch: VllmLaunch, build: Build) -> None:
    config = launch.get_json("--speculative-config") or {}
    if not isinstance(config, dict) or not config:
        return
    method = str(config.get("method", "eagle" if config.get("model") else "")).lower()
    algorithm = vocab.SPECULATIVE_ALGORITHMS.get(method)
    if algorithm is None:
        build.drop("--speculative-config", json.dumps(config), f"SGLang has no speculative algorithm for {method!r}")
        return
    build.add("--speculative-algorithm", algorithm)
    if config.get("model"):
        build.add("--speculative-draft-model-path", str(config["model"]))
    steps = config.get("num_speculative_tokens")
    if isinstance(steps, int) and steps > 0:
        build.add("--speculative-num-steps", str(steps))
        build.add("--speculative-eagle-topk", "1")
        build.add("--speculative-num-draft-tokens", str(steps + 1))


def _disaggregation(launch: VllmLaunch, build: Build) -> None:
    config = launch.get_json("--kv-transfer-config")
    if not isinstance(config, dict):
        return
    mode = vocab.KV_ROLES.get(str(config.get("kv_role")))
    if mode is None:
        build.drop("--kv-transfer-config", json.dumps(config),
                   "SGLang disaggregates prefill and decode only (kv_role kv_producer / kv_consumer)")
        return
    build.add("--disaggregation-mode", mode)
    backend = vocab.TRANSFER_BACKENDS.get(str(config.get("kv_connector")))
    if backend:
        build.add("--disaggregation-transfer-backend", backend)
    else:
        build.findings.append(finding(WARNING, "sglang.transfer-backend",
                                      f"SGLang has no transfer backend for {config.get('kv_connector')}; "
                                      "it uses its default (mooncake)", fix="pick nixl or mooncake"))


def _multi_node(launch: VllmLaunch, build: Build) -> None:
    host = launch.get("--master-addr") or launch.get("--data-parallel-address")
    if host:
        port = launch.get("--master-port") or "5000"
        build.add("--dist-init-addr", f"{host}:{port}")
