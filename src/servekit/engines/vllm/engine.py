"""vLLM, the native engine: command forms, the pinned catalog, the rules of ``vllm serve`` beyond
its parser. Plans are written in its form, so its translation keeps a launch as it is."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from servekit.engines.common.command_line import (
    EngineCommand,
    option_value,
    split_docker_run,
    split_program_command,
    strip_env,
)
from servekit.engines.common.engine import Engine
from servekit.engines.common.files import NamedFile
from servekit.engines.common.findings import Finding
from servekit.engines.common.flags import FlagCatalog
from servekit.engines.common.scan import scan
from servekit.engines.vllm.catalog import CATALOGS, DEFAULT_VERSION, ID
from servekit.engines.vllm.config_fields import nested_config_findings
from servekit.engines.vllm.rules import serve_rule_findings
from servekit.engines.vllm.specs import INSTALL, LAUNCH, MEMORY, PRECOMPILE
from servekit.engines.vllm.versions import other_release_spelling

if TYPE_CHECKING:
    from servekit.engines.common.artifacts import Artifact
    from servekit.engines.common.translation import DialectContext, EngineLaunch
    from servekit.engines.common.upgrade_table import UpgradeTable

_MODEL_OPTION = re.compile(r"^--model(=.+|$)")
_SERVED_NAME = re.compile(r"^--served[-_]model[-_]name(=.+|$)")
_CONFIG_OPTION = re.compile(r"^--config(=.+|$)")
_PYTHON = re.compile(r"(^|/)python[0-9.]*$")


def move_model_option(args: list[str]) -> list[str]:
    """``vllm serve`` moves the first ``--model X`` to the front as the positional model."""
    for i, arg in enumerate(args):
        if _MODEL_OPTION.match(arg):
            if arg == "--model":
                if i + 1 >= len(args):
                    return args
                return [args[i + 1], *args[:i], *args[i + 2:]]
            return [arg.removeprefix("--model="), *args[:i], *args[i + 1:]]
    return args


def _config_file_findings(args: Sequence[str]) -> list[Finding]:
    """vLLM reads the --config YAML while parsing: it must end in .yaml / .yml (whether it exists
    where the command runs is asked in ``_named_files``)."""
    path = option_value(args, "--config")
    if path is None:
        return []
    if path.rsplit(".", 1)[-1] not in ("yaml", "yml"):
        return [Finding("error", "bad-config-file", f"--config {path}: vLLM reads only .yaml / .yml files",
                        "rename the file to .yaml", location="--config")]
    return [Finding("note", "config-file-not-checked",
                    "options inside the --config YAML file are not checked", location="--config")]


_JINJA_CHARS = "{}\n"
EXAMPLES_HINT = ("vLLM's examples/ are in its source tree and its docker images, not in a pip install: "
                 "download the file from https://github.com/vllm-project/vllm/tree/main/examples to that path, "
                 "or run the docker form")


def _named_files(args: Sequence[str], catalog: FlagCatalog) -> list[NamedFile]:
    """--config (read while parsing) and a --chat-template that is a path: not inline Jinja and
    not one of vLLM's built-in template names."""
    out = []
    config = option_value(args, "--config")
    if config is not None and config.rsplit(".", 1)[-1] in ("yaml", "yml"):
        out.append(NamedFile("--config", config, "missing-config-file",
                             "vLLM fails while parsing the command line", "create it or drop --config"))
    template = option_value(args, "--chat-template")
    if (template is not None and not any(c in template for c in _JINJA_CHARS)
            and template not in catalog.registries.get("builtin_chat_templates", ())):
        hint = EXAMPLES_HINT if template.startswith("examples/") else None
        out.append(NamedFile("--chat-template", template, "missing-chat-template",
                             "vLLM refuses to start (it is not one of its built-in template names either)", hint))
    return out


class VllmEngine(Engine):
    id = ID
    aliases: tuple[str, ...] = ()
    default_version = DEFAULT_VERSION
    commands = ("serve",)
    install = INSTALL
    user_install = None  # the plan installs vLLM itself
    single_process = False
    vllm_platforms = ("cuda", "rocm", "xpu", "cpu", "tpu")
    precompile = PRECOMPILE
    launch = LAUNCH
    memory = MEMORY
    catalogs = CATALOGS

    # The upgrade table, translation and the repos a launch loads answer `servekit upgrade`, other
    # engines' plans and warm-cache; their modules are imported when asked, not by every plan.
    @property
    def upgrades(self) -> UpgradeTable:
        from servekit.engines.vllm.upgrades import TABLE

        return TABLE

    def recognizes(self, argv: Sequence[str]) -> bool:
        _, rest = strip_env(argv)
        if split_docker_run(rest) is not None:
            return True
        return rest[:1] == ["vllm"] or (len(rest) >= 3 and bool(_PYTHON.search(rest[0])) and rest[1] == "-m"
                                        and rest[2].startswith("vllm."))

    def flag_catalog(self, version: str | None = None, command: str = "serve") -> FlagCatalog:
        return self.adjust_catalog(CATALOGS.load(version or self.default_version, command))

    def adjust_catalog(self, catalog: FlagCatalog) -> FlagCatalog:
        """A platform plugin's view of vLLM's catalog; vLLM itself takes it as stored."""
        return catalog

    def other_release_spelling(self, catalog: FlagCatalog, option: str) -> tuple[str, str] | None:
        return other_release_spelling(catalog, option) if catalog.command == "serve" else None

    def translate(self, vllm_argv: Sequence[str], context: DialectContext | None = None) -> EngineLaunch:
        from servekit.engines.common.translation import DialectContext, EngineLaunch

        context = context or DialectContext()
        return EngineLaunch(engine=self.id, argv=tuple(vllm_argv), env=dict(context.env), image=context.image)

    def validate(self, argv: Sequence[str], context: DialectContext | None = None) -> list[Finding]:
        return []

    def artifacts(self, argv: Sequence[str]) -> list[Artifact]:
        from servekit.engines.vllm.artifacts import vllm_artifacts

        return vllm_artifacts(argv)

    def plan_fields(self, launch: EngineLaunch) -> dict[str, Any]:
        return {}

    def split_command(self, argv: Sequence[str]) -> EngineCommand:
        docker = split_docker_run(argv)
        if docker is not None:
            # the vLLM images start `vllm serve` themselves; others are given the full command
            command = self.split_command(list(docker.command(("vllm", "serve"))))
            return EngineCommand(command.command, command.args, "docker", docker.env + command.env,
                                 ("docker", "run", docker.image))
        env, rest = strip_env(argv)
        if rest[:2] == ["vllm", "serve"]:
            return EngineCommand("serve", tuple(move_model_option(rest[2:])), "vllm-serve", env, tuple(rest[:2]))
        if len(rest) >= 3 and _PYTHON.search(rest[0]) and rest[1] == "-m" and rest[2].startswith("vllm."):
            return EngineCommand("serve", tuple(rest[3:]), "api-server", env, tuple(rest[:3]))
        if rest[:1] == ["vllm"]:
            return split_program_command(rest, "vllm", self.commands)
        return EngineCommand("serve", tuple(rest), "bare", env)

    def named_files(self, command: EngineCommand, catalog: FlagCatalog) -> list[NamedFile]:
        return _named_files(command.args, catalog) + super().named_files(command, catalog)

    def extra_findings(self, command: EngineCommand, catalog: FlagCatalog) -> list[Finding]:
        out: list[Finding] = []
        args = command.args
        out += _config_file_findings(args)
        read = scan(catalog, list(args))
        out += serve_rule_findings(catalog, read.occurrences, dict(command.env))
        out += nested_config_findings(catalog, read.occurrences)
        given = {occ.spec.dest for occ in read.occurrences}
        if not read.positionals and "model" not in given and "config" not in given:
            default = catalog.by_dest("model").default if catalog.by_dest("model") else None
            out.append(Finding("warning", "no-model", f"no model is given; vLLM serves its default ({default})",
                               fix="name the model: vllm serve MODEL"))
        if command.form == "vllm-serve":
            has_positional_model = bool(args) and not args[0].startswith("-")
            if (not has_positional_model and not any(_CONFIG_OPTION.match(a) for a in args)
                    and any(_SERVED_NAME.match(a) for a in args)):
                out.append(Finding("error", "model-not-first",
                                   "with --served-model-name, vllm serve needs the model as its first argument",
                                   "write: vllm serve MODEL --served-model-name NAME", location="--served-model-name"))
        return out


ENGINE = VllmEngine()
