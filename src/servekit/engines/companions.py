"""Programs that run beside engine servers: the router in front of prefill/decode pools or
KV-store instances, and the companion services an engine's KV connector talks to.

Each program is pinned and installed into an environment of its own, the way engines are
(``servekit.engines.environments``): ``vllm-router==0.1.17`` lives in
``<engines dir>/vllm-router-0.1.17/``. A plan names a program by the first word of its command
(``vllm-router``, ``lmcache``, ``mooncake_master``, ``ray``); ``program_of`` finds it here.

``servekit engine install vllm-router==0.1.17`` installs one ahead of time (``scripts/install_engines.sh``
does, for the engine-marked tests); ``servekit.engines.install_specs`` reads the requirement.
"""

from __future__ import annotations

from servekit.engines.common.install import InstallRecipe, InstallSpec
from servekit.records import record



@record
class CompanionProgram:
    """One program a plan may start beside its engine servers.

    ``readiness_path``: an HTTP path answering 200 once it serves (None: it is ready when its port
    accepts connections). ``port_option`` / ``host_option``: the options giving where it listens;
    ``metrics_port_option``: the option moving a metrics listener of its own off a fixed default.
    """

    program: str
    recipe: InstallRecipe
    readiness_path: str | None = None
    port_option: str | None = None
    host_option: str | None = None
    metrics_port_option: str | None = None

    @property
    def requirement(self) -> str:
        return self.recipe.requirement

    def spec(self, version: str | None = None) -> InstallSpec:
        return self.recipe.spec(version)


def _recipe(dist: str, version: str, import_name: str) -> InstallRecipe:
    return InstallRecipe(dist=dist, default_version=version, import_name=import_name,
                         steps=((f"{dist}=={{version}}",),), key_packages=(dist,))


PROGRAMS: tuple[CompanionProgram, ...] = (
    # The router of prefill/decode and KV-store plans (a Rust binary in a PyPI wheel). It answers
    # /readiness with 200 once its workers are healthy; its Prometheus listener defaults to a
    # fixed port, so each run gives it one of its own.
    CompanionProgram("vllm-router", _recipe("vllm-router", "0.1.17", "vllm_router"),
                     readiness_path="/readiness", port_option="--port", host_option="--host",
                     metrics_port_option="--prometheus-port"),
    # The LMCache server of the LMCacheMPConnector (the catalog pins lmcache==0.5.1); its engine
    # side names the port in --kv-transfer-config, so the port stays the plan's.
    CompanionProgram("lmcache", _recipe("lmcache", "0.5.1", "lmcache"), port_option="--port"),
    # Mooncake's metadata service, from the transfer engine's wheel (the catalog's floor version).
    CompanionProgram("mooncake_master", _recipe("mooncake-transfer-engine", "0.3.10", "mooncake"),
                     port_option="-rpc_port"),
    # Ray, whose cluster the nodes of the Ray form join (``servekit.synthesis.nodes``): Ray's head
    # listens on ``ray start --head --port``; every node needs the same release.
    CompanionProgram("ray", _recipe("ray", "2.60.0", "ray"), port_option="--port"),
)


def programs() -> dict[str, CompanionProgram]:
    return {p.program: p for p in PROGRAMS}


def program_of(word: str) -> CompanionProgram | None:
    """The program a command's first word names (a path's file name counts), or None."""
    return programs().get(word.rsplit("/", 1)[-1])
