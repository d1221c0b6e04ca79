"""Deployment checks over the whole artifact: visible devices against the parallel layout, the
container's devices, and the container network of a plan that spans several machines."""

from __future__ import annotations

import json

from servekit.app.device_checks import exposed_devices, node_share, visible_findings
from servekit.app.network_checks import network_findings
from servekit.cli.app import main
from servekit.hardware import profile_of

H200 = profile_of({"gpu_count": 8, "vram_gb": 141, "brand": "NVIDIA", "generation": "hopper",
                   "display_name": "H200"}, "h200")


def test_visible_devices_cover_dp_local_times_tp_times_pp():
    share = node_share(["vllm", "serve", "m", "--data-parallel-size", "8", "--data-parallel-size-local", "8"])
    assert share.per_node == 8
    (finding,) = visible_findings(share, {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}, H200)
    assert finding.code == "visible-devices" and finding.is_error
    assert "shows 4 device(s)" in finding.message and "DP-local 8 x TP 1 uses 8 on this node" in finding.message
    assert "lower --data-parallel-size-local to 4" in (finding.fix or "")
    assert visible_findings(share, {"CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7"}, H200) == []


def test_a_multi_node_world_is_shared_by_its_nodes_and_ray_places_its_own():
    assert node_share(["vllm", "serve", "m", "-tp", "16", "--nnodes", "2", "--node-rank", "1"]).per_node == 8
    assert node_share(["vllm", "serve", "m", "--tensor-parallel-size", "2", "--pipeline-parallel-size", "2"]).per_node == 4
    assert node_share(["vllm", "serve", "m", "--data-parallel-size", "4", "--data-parallel-rank", "2"]).per_node == 1
    ray = node_share(["vllm", "serve", "m", "-tp", "16", "--distributed-executor-backend", "ray"])
    assert ray.per_node is None and visible_findings(ray, {"CUDA_VISIBLE_DEVICES": "0"}, H200) == []


def test_a_device_the_node_lacks_and_values_the_shell_fills_in():
    share = node_share(["vllm", "serve", "m"])
    (finding,) = visible_findings(share, {"CUDA_VISIBLE_DEVICES": "8"}, H200)
    assert "names device 8" in finding.message and "ids 0-7" in finding.message
    assert visible_findings(share, {"CUDA_VISIBLE_DEVICES": "$GPUS"}, H200) == []


def test_the_container_devices_given_to_docker_run():
    assert exposed_devices(["docker", "run", "--gpus", "all", "img"]) is None
    assert exposed_devices(["docker", "run", "--gpus", "2", "img"]) == 2
    assert exposed_devices(["docker", "run", "--gpus", '"device=0,1,2"', "img"]) == 3
    assert exposed_devices(["docker", "run", "--device", "/dev/davinci0", "--device", "/dev/davinci1",
                            "--device", "/dev/davinci_manager", "img"]) == 2


def test_a_container_of_a_several_machine_plan_needs_the_host_network():
    bridge = ["docker", "run", "--gpus", "all", "-p", "8000:8000", "-e", "NCCL_SOCKET_IFNAME=$IFACE_NAME", "img"]
    (finding,) = network_findings(bridge, several_machines=True)
    assert finding.code == "container-network" and finding.is_error
    assert "NCCL_SOCKET_IFNAME" in finding.message and "--network host" in (finding.fix or "")
    assert network_findings(bridge, several_machines=False) == []


def test_docker_run_gets_no_ignored_port_and_no_repeated_switch():
    host = ["docker", "run", "--privileged", "--network", "host", "--privileged", "-p", "8000:8000", "img"]
    codes = {f.code: f.severity for f in network_findings(host, several_machines=True)}
    assert codes == {"published-ports-ignored": "warning", "repeated-docker-flag": "warning"}
    assert network_findings(["docker", "run", "--network=host", "--init", "img"], several_machines=True) == []


def _checks(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["plan", *argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)["servekit"]["checks"]


def test_a_two_node_docker_form_runs_on_the_host_network_and_passes(capsys):
    args = ("meta-llama/Llama-3.1-8B-Instruct", "--hardware", "h100", "--strategy", "multi_node_tp", "--nodes", "2")
    code, checks = _checks(capsys, *args)
    assert checks["deploy"] == [] and code == 0
    assert main(["plan", *args, "--docker"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "--network host" in out and "deploy (" not in out


def test_pd_cluster_on_one_node_shows_half_the_node_to_a_pool_of_eight(reference_catalog, capsys):
    """``DeepSeek-V4-Flash --strategy pd_cluster`` on one node pins each pool to four GPUs while
    its data-parallel layout asks for eight: the plan is refused with both fixes named."""
    code, checks = _checks(capsys, "deepseek-ai/DeepSeek-V4-Flash", "--strategy", "pd_cluster",
                           "--catalog", str(reference_catalog))
    found = {(f["role"], f["code"]) for f in checks["deploy"]}
    assert found == {("prefill", "visible-devices"), ("decode", "visible-devices")}
    assert code == 1


def test_a_cuda_image_on_rocm_hardware_is_refused_in_the_container_form(capsys):
    args = ("Qwen/Qwen3.8-27B", "--hardware", "mi300x", "--image", "vllm/vllm-openai:v0.30.0")
    code, checks = _checks(capsys, *args)
    assert code == 0 and checks["deploy"] == []  # the native form does not run the image
    assert main(["plan", *args, "--docker"]) == 1
    out = capsys.readouterr().out
    assert "deploy (container): error image-platform: vllm/vllm-openai:v0.30.0 is built for cuda, but mi300x runs rocm" in out
    assert main(["plan", "Qwen/Qwen3.8-27B", "--hardware", "mi300x", "--docker"]) == 0
    assert "image-platform" not in capsys.readouterr().out
