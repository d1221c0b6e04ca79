"""The builder and catalog pages: server-rendered, the CLI's command, only valid choices, inert markup."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from servekit.app.plan import plan
from servekit.app.plan_view import plan_payload
from servekit.app.request import PlanRequest

from .conftest import MODEL, SCRIPT


def block(page: str, block_id: str) -> str:
    match = re.search(rf'<pre id="{re.escape(block_id)}"[^>]*>(.*?)</pre>', page, re.S)
    assert match, f"no block {block_id}"
    return html.unescape(re.sub(r"<[^>]+>", "", match.group(1)))  # a command's lines are spans


def options(page: str, select_id: str) -> list[str]:
    match = re.search(rf'<select id="{re.escape(select_id)}"[^>]*>(.*?)</select>', page, re.S)
    assert match, f"no select {select_id}"
    return [html.unescape(v) for v in re.findall(r'<option value="([^"]*)"', match.group(1))]


def cli_payload(**choices) -> dict:
    return plan_payload(plan(PlanRequest(MODEL, **choices)))


def test_builder_plans_the_layout_the_cli_plans(client):
    """On h100 the recipe's TP 1 does not fit; the page, like the CLI, plans TP 2."""
    page = client.get(f"/?model={MODEL}&hardware=h100").text
    expected = cli_payload(hardware="h100")
    assert block(page, "cmd-command") == expected["command"] and "--tensor-parallel-size 2" in expected["command"]


def test_builder_shows_the_cli_command(client):
    page = client.get(f"/?model={MODEL}&hardware=rtx_5090").text
    expected = cli_payload(hardware="rtx_5090")
    assert block(page, "cmd-command") == expected["command"]
    assert block(page, "docker-docker-command") == expected["docker_command"]
    assert "rtx_5090: fits" in page or "serve: fits" in page
    assert 'id="b-k8s"' not in page and 'id="k8s-k8s"' in page


def test_features_and_modes_follow_the_query(client):
    page = client.get(f"/?model={MODEL}&hardware=rtx_5090&feature=spec_decoding&no_feature=reasoning").text
    expected = cli_payload(hardware="rtx_5090", features=("spec_decoding",), no_features=("reasoning",))
    assert block(page, "cmd-command") == expected["command"]
    form_page = client.get(f"/?model={MODEL}&hardware=rtx_5090&fs=1&feature=tool_calling&feature=spec_decoding").text
    assert block(form_page, "cmd-command") == cli_payload(
        hardware="rtx_5090", features=("tool_calling", "spec_decoding"),
        no_features=("reasoning", "text_only", "encoder_parallel", "long_context")).get("command")


def test_only_valid_choices_are_offered(client):
    page = client.get(f"/?model={MODEL}&hardware=rtx_5090&feature=spec_decoding").text
    assert options(page, "f-strategy") == ["", "single_node_tp"]
    assert "b200" in options(page, "f-hardware")
    assert "h100" not in options(page, "f-hardware")  # the recipe does not mark it
    assert options(page, "mode-spec_decoding") == ["", "spec_decoding=mtp"]  # dflash / dspark need other hardware


def test_a_choice_that_does_not_fit_is_dropped_with_a_note(client):
    page = client.get(f"/?model={MODEL}&hardware=rtx_5090&strategy=multi_node_tp&nodes=2").text
    assert "strategy multi_node_tp does not go with the choices before it" in page
    assert block(page, "cmd-command") == cli_payload(hardware="rtx_5090")["command"]


def test_unknown_model_is_a_404_page(client):
    response = client.get("/?model=nope/none")
    assert response.status_code == 404
    assert "unknown recipe" in response.text


def test_catalog_filters(client):
    everything = client.get("/catalog").text
    assert MODEL in everything and "meta-llama/Llama-3.1-8B-Instruct" in everything
    by_vendor = client.get("/catalog?vendor=Qwen").text
    assert "meta-llama/Llama-3.1-8B-Instruct" not in by_vendor and MODEL in by_vendor
    by_feature = client.get("/catalog?feature=spec_decoding").text
    assert MODEL in by_feature
    by_hardware = client.get("/catalog?hardware=rtx_5090").text
    assert MODEL in by_hardware
    assert "unknown hardware" in client.get("/catalog?hardware=nope").text


@pytest.mark.parametrize("path", ["/", f"/?model={MODEL}", f"/?model={MODEL}&hardware=rtx_5090&feature=tool_calling",
                                  "/catalog", "/catalog?q=qwen", "/catalog?feature=tool_calling"])
def test_markup_in_recipe_text_is_inert(markup_client, path):
    page = markup_client.get(path).text
    assert SCRIPT not in page
    assert "<img src=x" not in page
    assert "<script" not in page.replace('<script src="/static/builder.js" defer></script>', "")
    if path != "/":
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_markup_in_the_api_is_json_text(markup_client):
    response = markup_client.get(f"/api/{MODEL}.json")
    assert response.headers["content-type"] == "application/json"
    assert SCRIPT in response.json()["meta"]["description"]


def test_web_command_is_registered(capsys):
    from servekit.cli.app import main

    assert main(["web", "--help"]) == 0
    assert "--port" in capsys.readouterr().out
    assert main(["web", "--port", "0"]) == 1


@pytest.mark.parametrize("path", [
    "/?model=%3Cscript%3Ealert(1)%3C/script%3E",
    f"/?model={MODEL}&hardware=%3Cscript%3Ealert(1)%3C/script%3E",
    f"/?model={MODEL}&feature=%3Cscript%3Ealert(1)%3C/script%3E&mode=%3Cscript%3Ealert(1)%3C/script%3E",
    "/catalog?hardware=%3Cscript%3Ealert(1)%3C/script%3E",
    "/catalog?q=%3Cscript%3Ealert(1)%3C/script%3E&vendor=%3Cscript%3Ealert(1)%3C/script%3E",
])
def test_markup_in_the_query_is_inert(client, path):
    """Pages that echo what the query asked for (an unknown model, hardware or feature) escape it."""
    response = client.get(path)
    assert response.status_code in (200, 404, 422)
    assert SCRIPT not in response.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text  # echoed, as text
    assert "<script" not in response.text.replace('<script src="/static/builder.js" defer></script>', "")


REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "catalog"


@pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"no reference catalog at {REFERENCE}")
def test_every_machine_of_a_prefill_decode_plan_has_its_command():
    """A prefill/decode plan over several nodes per pool: the rendering object names each pool's
    first node; the page shows the others too, each as ``servekit plan`` writes it."""
    from fastapi.testclient import TestClient

    from servekit.synthesis.render import process_command
    from servekit.web.server import create_app

    model = "inclusionAI/Ring-1T-FP8"
    result = plan(PlanRequest(model, strategy="pd_cluster", catalog=str(REFERENCE)))
    followers = [p for p in result.plan.processes if p.rank]
    assert followers, "the sample plan has no second node per pool; pick another"
    with TestClient(create_app(str(REFERENCE))) as reference:
        page = reference.get(f"/?model={model}&strategy=pd_cluster").text
    shown = [html.unescape(re.sub(r"<[^>]+>", "", b)) for b in re.findall(r'<pre id="cmd-[^"]*"[^>]*>(.*?)</pre>', page, re.S)]
    for proc in result.plan.processes:
        if proc.program == result.plan.processes[0].program:
            assert process_command(proc) in shown, proc.role


def test_every_step_of_the_ray_form_is_on_the_page(client):
    """A TPU plan over two hosts is the Ray form: the page shows Ray's head before the server, and
    in containers Ray's head container, the wait for it and the server run inside it, each as the
    CLI writes it."""
    llama = "meta-llama/Llama-3.1-8B-Instruct"
    page = client.get(f"/?model={llama}&hardware=trillium&strategy=multi_node_tp&nodes=2").text
    expected = plan_payload(plan(PlanRequest(llama, hardware="trillium", strategy="multi_node_tp", nodes=2)))
    assert block(page, "cmd-ray-head") == expected["ray_head_command"]
    assert block(page, "cmd-head") == expected["head_command"]
    assert page.index('id="cmd-ray-head"') < page.index('id="cmd-head"')
    for key in ("head_docker_command", "ray_ready_command", "head_exec_command"):
        assert block(page, "docker-" + key.replace("_", "-")) == expected[key]
    assert block(page, "docker-worker-docker-2") == expected["worker_docker_commands"][0]
