"""What ``servekit plan`` does with its options, apart from parsing them: one launch plan for
people or programs, or a batch of them.

Prints what ``servekit.app.plan`` returns: a script a person can paste (text), one POSIX script
(sh), the rendering object (json) or Kubernetes YAML (k8s). Kept import-light and free of typer:
a plain ``servekit plan`` is parsed by ``servekit.cli.plan_argv`` and runs from here without the
typer application (``servekit.cli.plan_cmd`` registers the same options with typer); the JSON
path loads only the one recipe it needs and never imports pydantic or rich.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

from servekit.synthesis.overrides import Overrides

FORMATS = ("text", "json", "sh", "k8s")


@dataclass
class PlanOptions:
    """What a ``servekit plan`` command line asks for, as parsed."""

    model: str | None = None
    hardware: str | None = None
    variant: str | None = None
    strategy: str | None = None
    nodes: int | None = None
    features: list[str] = field(default_factory=list)
    no_features: list[str] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)
    kv_offload: str | None = None
    engine: str = "vllm"
    catalog: str | None = None
    output_format: str = "text"
    batch: str | None = None
    task: str | None = None
    checks: bool | None = None
    target: str | None = None
    qaic_mode: str | None = None
    devices: str | None = None
    namespace: str | None = None
    name: str | None = None
    storage_class: str | None = None
    cache_size: str | None = None
    docker: bool = False
    overrides: Overrides = field(default_factory=Overrides)  # --tp, --image, --vllm-version ...


def batch_command(path: str, catalog: str | None) -> int:
    from servekit.app.batch import plan_lines
    from servekit.app.request import load_documents
    from servekit.cli.inputs import open_input, write_json_lines

    with open_input(path, "batch file") as handle:  # a missing file fails before the catalog is read
        written = write_json_lines(plan_lines(load_documents(catalog), handle), path, "batch file",
                                   ensure_ascii=False)
    return written.exit_code


def plan_request(opts: PlanOptions, documents=None):
    """The options as the planning pipeline's request (``documents``: a catalog already read)."""
    from servekit.app.request import EngineOptions, PlanRequest
    from servekit.app.run_site import RunSite
    from servekit.synthesis.resolve import parse_mode_pairs

    return PlanRequest(
        opts.model or "", hardware=opts.hardware, variant=opts.variant, strategy=opts.strategy, nodes=opts.nodes,
        features=tuple(opts.features), no_features=tuple(opts.no_features), modes=parse_mode_pairs(opts.modes),
        kv_offload=opts.kv_offload, engine=opts.engine, task=opts.task, checks=opts.checks is not False,
        engine_options=EngineOptions(opts.target, opts.qaic_mode, opts.devices), catalog=opts.catalog,
        site=RunSite(container=opts.docker or opts.output_format == "k8s", docker=opts.output_format != "k8s"),
        documents=documents,
    )


def _ignored_options(opts: PlanOptions) -> None:
    """Options the chosen form or engine does not read: an error rather than silence."""
    from servekit.app.engine_choice import translates
    from servekit.errors import SelectionError

    def dialect_names() -> list[str]:
        from servekit.engines.plan_translate import dialect_names as names

        return names()

    if opts.batch is not None and opts.model:
        raise SelectionError(f"MODEL {opts.model!r} and --batch both given; a batch names its models per line",
                             fix="leave out MODEL, or leave out --batch")
    engine_only = [name for name, value in (("--target", opts.target), ("--qaic-mode", opts.qaic_mode),
                                            ("--devices", opts.devices)) if value]
    if engine_only and not translates(opts.engine):
        verb = "apply" if len(engine_only) > 1 else "applies"
        raise SelectionError(f"{', '.join(engine_only)} only {verb} to engines that translate the plan, "
                             f"not {opts.engine}", fix=f"pass --engine with one of {', '.join(dialect_names())}, or leave them out")
    if opts.docker and opts.output_format in ("json", "k8s"):
        raise SelectionError(f"--docker shapes the text and sh forms; --format {opts.output_format} has no use for it",
                             fix="leave out --docker, or use --format text or --format sh")


def _engine_error(result) -> int:
    """A translated plan with error findings: its first error on stderr, exit 1."""
    from servekit.app.plan_view import engine_errors

    errors = engine_errors(result)
    if not errors:
        return 0
    first = errors[0]
    more = f" (and {len(errors) - 1} more error(s) in the plan)" if len(errors) > 1 else ""
    sys.stderr.write(f"error: {first.message}{more}" + (f" (fix: {first.fix})" if first.fix else "") + "\n")
    return 1


def plan_command(opts: PlanOptions) -> int:
    """Plan and print one plan (or a batch); returns the exit code."""
    from servekit.errors import SelectionError

    _ignored_options(opts)
    if opts.batch is not None:
        return batch_command(opts.batch, opts.catalog)
    if not opts.model:
        raise SelectionError("name a MODEL (a recipe id such as Qwen/Qwen3.8-27B) or pass --batch FILE")
    from servekit.app.overridden import plan_with_overrides

    return print_plan(plan_with_overrides(plan_request(opts), opts.overrides), opts)


def print_plan(result, opts: PlanOptions) -> int:
    """Print one planned result in the form ``opts`` asks for; the exit code of ``servekit plan``."""
    import dataclasses

    from servekit.app.plan_view import CANNOT_START, engine_errors, plan_payload

    if engine_errors(result):
        result = dataclasses.replace(result, checks=None)  # a plan that cannot run has no fit to show
    if opts.output_format == "k8s":
        if _k8s(result.plan, opts):
            return 1
    elif opts.output_format == "json":
        payload = plan_payload(result, opts.overrides.vllm_version)
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        from servekit.app.plan_text import plan_lines, plan_sh  # the script writer: not for the JSON form

        if opts.output_format == "sh":
            sys.stdout.write(plan_sh(result, docker=opts.docker, version=opts.overrides.vllm_version))
        else:
            _print_lines(plan_lines(result, docker=opts.docker, version=opts.overrides.vllm_version))
    if _engine_error(result):
        return 1
    if not result.can_start:
        if opts.output_format == "k8s" and result.checks:  # the documents carry no checks block: say which
            from servekit.app.checks import check_lines

            sys.stderr.write("".join(f"{line.strip()}\n" for line in check_lines(result.checks)
                                     if line.lstrip().startswith("error ") or ": error " in line))
        sys.stderr.write(f"error: {CANNOT_START}\n")
        return 1
    return 0 if result.valid else 1


def _k8s(plan, opts: PlanOptions) -> int:
    """Print the Kubernetes documents; their error findings on stderr too (the exit code is 1 then)."""
    from servekit.app.k8s_plan import plan_k8s_text, plan_manifests
    from servekit.k8s.cli_glue import options_from_cli
    from servekit.warm.hub import HubSettings

    k8s_options = options_from_cli(opts.namespace, opts.name, opts.storage_class, opts.cache_size)
    manifests = plan_manifests(plan, k8s_options, settings=HubSettings.from_env(), catalog=opts.catalog)
    sys.stdout.write(plan_k8s_text(manifests, plan))
    for finding in manifests.errors:
        sys.stderr.write(f"{finding}\n")
    return len(manifests.errors)


def _print_lines(lines: list[str]) -> None:
    if not sys.stdout.isatty():
        sys.stdout.write("".join(line + "\n" for line in lines))
        return
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    for line in lines:
        if line.startswith("#") and "<-" in line:
            command, _, reason = line.partition("<-")
            console.print(f"[cyan]{escape(command)}[/][dim]<-{escape(reason)}[/]")
        elif line.startswith("#"):
            console.print(f"[bold cyan]{escape(line)}[/]")
        else:
            console.print(escape(line))


def checked_format(output_format: str) -> str:
    """``--format``'s value, when it is one of ``FORMATS``."""
    from servekit.errors import SelectionError

    if output_format not in FORMATS:
        raise SelectionError(f"unknown format {output_format!r}; valid choices: {', '.join(FORMATS)}")
    return output_format


def run_plan(opts: PlanOptions) -> int:
    """``servekit plan`` with its options parsed (by typer or by ``servekit.cli.plan_argv``):
    the format checked, then ``plan_command``; returns the exit code."""
    checked_format(opts.output_format)
    return plan_command(opts)
