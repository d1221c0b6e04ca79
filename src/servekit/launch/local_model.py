"""The minimal plan for a model no recipe names: ``vllm serve DIR`` with the plan options given.

A local model directory (``config.json`` beside its weights) is a model. Its served name is
the directory's name unless ``--served-model-name`` says otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path

from servekit.engines.registry import native_engine
from servekit.errors import ServekitError
from servekit.launch.launch_plan import LaunchPlan, engine_process, served_name_of
from servekit.records import record


@record
class LocalOptions:
    """Plan options for a local model: the engine's own options, its env, what to probe."""

    max_model_len: int | None = None
    served_name: str | None = None
    extra_args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    features: tuple[str, ...] = ()
    engine_options: Mapping[str, str] = field(default_factory=dict)


def is_local_model(model: str) -> bool:
    return Path(model).expanduser().is_dir()


def local_model_plan(model: str, engine: str, options: LocalOptions = LocalOptions()) -> LaunchPlan:
    """One server process for the model directory ``model``, in ``engine``'s form."""
    folder = Path(model).expanduser().resolve()
    if not (folder / "config.json").is_file():
        raise ServekitError(f"{folder} has no config.json; it is not a model directory",
                            fix="point at a folder holding config.json and the weights")
    served = options.served_name or folder.name
    argv = [*native_engine().launch.program, str(folder), "--served-model-name", served]
    if options.max_model_len:
        argv += ["--max-model-len", str(options.max_model_len)]
    argv += list(options.extra_args)
    process, findings = engine_process(engine, "serve", argv, dict(options.env), options.engine_options)
    return LaunchPlan(
        engine=engine, model=str(folder), served_name=served_name_of(argv, served), processes=(process,),
        source=f"local model directory {folder}", features=tuple(options.features), findings=tuple(findings),
    )


def features_of(argv: Sequence[str]) -> tuple[str, ...]:
    """The probe-able features a native argv enables by its options alone."""
    words = [w.split("=", 1)[0] for w in argv]
    found = []
    if "--tool-call-parser" in words and "--enable-auto-tool-choice" in words:
        found.append("tool_calling")
    if "--reasoning-parser" in words:
        found.append("reasoning")
    return tuple(found)
