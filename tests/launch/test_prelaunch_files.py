"""``up`` looks for the files a command names where it runs: on this machine, or, for
``up --docker``, inside the container's image (behind its bind mounts, this machine's)."""

from __future__ import annotations

from servekit.launch.launch_plan import LaunchPlan, LaunchProcess
from servekit.launch.prelaunch import prelaunch

TEMPLATE = "examples/tool_chat_template_gemma4.jinja"


def _plan(image: str, mount: str = "") -> LaunchPlan:
    argv = ("vllm", "serve", "m", "--chat-template", TEMPLATE)
    docker = f"docker run --gpus all {mount}{image} m --chat-template {TEMPLATE}"
    return LaunchPlan("vllm", "m", "m", (LaunchProcess("serve", argv, vllm_argv=argv),), image=image,
                      docker_commands=(docker,))


def _codes(plan: LaunchPlan, docker: bool) -> dict[str, str]:
    return {f["code"]: f["severity"] for f in prelaunch(plan, None, docker=docker).findings if f["check"] == "lint"}


def test_up_needs_the_file_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = _plan("vllm/vllm-openai:v0.25.0")
    assert _codes(plan, docker=False) == {"missing-chat-template": "error"}
    assert not prelaunch(plan, None).ok


def test_up_docker_finds_it_in_the_image_or_behind_a_bind_mount(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _codes(_plan("vllm/vllm-openai:v0.25.0"), docker=True) == {}
    (tmp_path / "tpl").mkdir()
    mounted = _plan("someone/custom-vllm:1", mount=f"-v {tmp_path / 'tpl'}:/app/examples ")
    mounted = LaunchPlan(**{**mounted.__dict__, "processes": (LaunchProcess(
        "serve", ("vllm", "serve", "m", "--chat-template", "/app/examples/t.jinja")),)})
    assert _codes(mounted, docker=True) == {"missing-chat-template": "error"}
    (tmp_path / "tpl" / "t.jinja").write_text("{{ messages }}", encoding="utf-8")
    assert _codes(mounted, docker=True) == {}
