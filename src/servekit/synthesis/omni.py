"""vLLM-Omni recipes: one ``vllm serve MODEL ... --omni`` process per chosen task.

An omni recipe lists tasks under ``omni.tasks`` (bare ids or maps with ``key``, ``model_id``,
``extra_args``, ``hardware_overrides``). The task decides the checkpoint and adds its args;
there is no parallel strategy. ``omni.port`` sets ``--port``; ``omni.serve_binary`` swaps the
binary for releases before ``vllm serve --omni`` existed.
"""

from __future__ import annotations

from servekit.catalog.domain import EMPTY_BLOCK, OmniTask, Recipe, block_or_empty
from servekit.errors import SelectionError
from servekit.synthesis.args import dedupe
from servekit.synthesis.context import Context
from servekit.synthesis.env import EnvLayers
from servekit.synthesis.hardware import generation_key
from servekit.synthesis.plan import Process

KNOWN_TASKS = ("t2i", "i2i", "t2v", "i2v", "ti2v", "t2a")


def known_tasks(recipe: Recipe) -> list[OmniTask]:
    """The recipe's tasks whose id is a known task kind, in order."""
    return [task for task in recipe.omni.tasks if task.id in KNOWN_TASKS]


def is_omni(recipe: Recipe) -> bool:
    return "omni" in recipe.meta.tasks and bool(known_tasks(recipe))


def pick_task(recipe: Recipe, key: str | None) -> OmniTask:
    """The task of that key (the first one for None); another key is a SelectionError."""
    tasks = known_tasks(recipe)
    if key is None:
        return tasks[0]
    for task in tasks:
        if task.key == key:
            return task
    raise SelectionError(f"unknown omni task {key!r}; valid choices: {', '.join(t.key for t in tasks)}")


def omni_process(ctx: Context) -> Process:
    recipe, variant, hw = ctx.recipe, ctx.variant, ctx.sel.hardware
    task = pick_task(recipe, ctx.sel.omni_task)
    exact = task.block(hw)
    model = exact.model_id or task.model_id or ctx.model_id
    task_path = f"omni.tasks[{task.key}]"
    not_default = ctx.sel.variant != "default"
    chunks = [(recipe.model.base_args, "model.base_args"),
              (variant.extra_args if not_default else None, f"{ctx.variant_path}.extra_args"),
              (task.extra_args, f"{task_path}.extra_args"),
              (exact.extra_args, f"{task_path}.hardware_overrides.{hw}.extra_args")]
    env = EnvLayers()
    env.merge(recipe.model.base_env, "model.base_env")
    if not_default:
        env.merge(variant.extra_env, f"{ctx.variant_path}.extra_env")
    for overrides, path in ((recipe.hardware_overrides, "hardware_overrides"),
                            (variant.hardware_overrides, f"{ctx.variant_path}.hardware_overrides")):
        key = generation_key(overrides, ctx.profile)
        if key:
            block = block_or_empty(overrides[key])
            chunks.append((block.extra_args, f"{path}.{key}.extra_args"))
            env.merge(block.extra_env, f"{path}.{key}.extra_env")
    variant_exact = variant.exact_block(hw) or EMPTY_BLOCK
    chunks.append((variant_exact.extra_args, f"{ctx.variant_path}.hardware_overrides.{hw}.extra_args"))
    env.merge(variant_exact.extra_env, f"{ctx.variant_path}.hardware_overrides.{hw}.extra_env")
    port = recipe.omni.port
    if port:
        chunks.append((["--port", str(port)], "omni.port"))
    chunks.append((["--omni"], "omni.tasks"))
    program = tuple(str(recipe.omni.serve_binary or "vllm serve").split())
    return Process(role="serve", model=model, args=dedupe(chunks), env=env.result(), port=port or 8000,
                   program=program, meta=(("omni_task", task.key),))
