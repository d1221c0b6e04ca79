"""The live JSON API: the same bytes as ``api build``, plan / lint / fit, and JSON errors."""

from __future__ import annotations

import os

import pytest

from servekit.api.publish import build_api
from servekit.app.plan import plan
from servekit.app.plan_view import plan_payload
from servekit.app.request import PlanRequest

from .conftest import MODEL


@pytest.fixture(scope="session")
def built_tree(tmp_path_factory):
    out = tmp_path_factory.mktemp("api") / "tree"
    build_api(out, None, jobs=1)
    return out


def _files(root) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def test_recipe_files_equal_the_built_tree(client, built_tree):
    files = [p for p in _files(built_tree) if p.count("/") >= 1 and not p.startswith(("strategies/", "kv_store/"))]
    sample = files[::7] + [p for p in files if p.endswith("/hw/rtx_5090.json")]
    assert len({p.split("/")[1] for p in sample}) >= 4, "the sample spans several recipes"
    for path in sample:
        response = client.get(f"/api/{path}")
        assert response.status_code == 200, path
        assert response.headers["content-type"] == "application/json"
        assert response.content == (built_tree / path).read_bytes(), path


def test_catalog_files_equal_the_built_tree(client, built_tree):
    wanted = ["models.json", "servekit.json", "taxonomy.json", "strategies.json", "kv_store.json"]
    wanted += [p for p in _files(built_tree) if p.startswith(("strategies/", "kv_store/"))][:4]
    for path in wanted:
        response = client.get(f"/api/{path}")
        assert response.status_code == 200, path
        assert response.content == (built_tree / path).read_bytes(), path


@pytest.mark.parametrize("path", [
    "/api/../pyproject.toml", "/api/%2e%2e/%2e%2e/etc/passwd", "/api/Qwen/..%2F..%2Fservekit.json",
    "/api/.hidden.json", "/api/Qwen/Qwen3.8-27B", "/api/nope/none.json", "/api/Qwen%5C..%5Cmodels.json",
    "/api/" + "a/" * 400 + "x.json",
])
def test_no_file_outside_the_tree(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/json")
    assert "error" in response.json()


def test_plan_matches_the_cli_pipeline(client):
    expected = plan_payload(plan(PlanRequest(MODEL, hardware="rtx_5090")))
    body = {"recipe": MODEL, "hardware": "rtx_5090", "variant": expected["variant"],
            "strategy": expected["strategy"], "features": expected["servekit"]["features"]}
    response = client.post("/api/plan", json=body)
    assert response.status_code == 200, response.text
    got = response.json()
    assert got["command"] == expected["command"]
    assert got["servekit"]["checks"]["fit"][0]["ok"] is True


def test_a_body_without_features_plans_the_recipe_defaults(client):
    expected = plan_payload(plan(PlanRequest(MODEL, hardware="h200", checks=False)))
    body = {"recipe": MODEL, "hardware": "h200", "strategy": expected["strategy"]}
    response = client.post("/api/plan", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["argv"] == expected["argv"] and "--tool-call-parser" in expected["argv"]
    bare = client.post("/api/plan", json={**body, "features": []})
    assert bare.status_code == 200 and "--tool-call-parser" not in bare.json()["argv"]


def test_a_body_whose_layout_does_not_fit_is_told_the_one_that_does(client):
    body = {"recipe": MODEL, "hardware": "h100", "strategy": "single_node_tp"}
    response = client.post("/api/plan", json=body)
    assert response.status_code == 200, response.text
    fit = response.json()["servekit"]["checks"]["fit"][0]
    assert fit["fits"] is False and "--tensor-parallel-size" in response.json()["argv"]
    layout = next(f for f in fit["findings"] if f["code"] == "fit-layout")
    assert layout["fix"] == "--strategy single_node_tp --tp 2"


def test_plan_and_fit_take_ids_in_any_case(client):
    body = {"recipe": MODEL.lower(), "hardware": "rtx_5090", "strategy": "single_node_tp"}
    response = client.post("/api/plan", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["argv"][2] == MODEL
    unknown = client.post("/api/plan", json={**body, "recipe": "qwen/qwen3.8-2"})
    assert unknown.status_code == 404 and f"closest: {MODEL}" in unknown.json()["error"]
    fit = client.post("/api/fit", json={"model": MODEL.upper(), "hardware": "rtx_5090", "variant": "nvfp4"})
    assert fit.status_code == 200, fit.text
    assert fit.json()["recipe"] == MODEL


@pytest.mark.parametrize(("body", "status"), [
    (b"{not json", 400),
    (b"[1, 2]", 400),
    (b'{"recipe": "Qwen/Qwen3.8-27B"}', 422),
    (b'{"recipe": "Qwen/Qwen3.8-27B", "hardware": "rtx_5090", "strategy": "single_node_tp", "node_count": true}', 422),
    (b'{"recipe": "no/such", "hardware": "rtx_5090", "strategy": "single_node_tp"}', 404),
    (b'{"recipe": "Qwen/Qwen3.8-27B", "hardware": "nope", "strategy": "single_node_tp"}', 422),
    (b'{"recipe": "Qwen/Qwen3.8-27B", "hardware": "rtx_5090", "strategy": "single_node_tp", "features": ["x"]}', 422),
])
def test_plan_errors_are_json(client, body, status):
    response = client.post("/api/plan", content=body, headers={"content-type": "application/json"})
    assert response.status_code == status, response.text
    assert response.json()["status"] == status
    assert response.json()["error"]


def test_bodies_over_the_limit_are_refused(client):
    big = b'{"command": "' + b"x" * (70 * 1024) + b'"}'
    response = client.post("/api/lint", content=big, headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert "error" in response.json()

    def chunks():
        yield b'{"command": "'
        for _ in range(80):
            yield b"x" * 1024
        yield b'"}'

    response = client.post("/api/lint", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413


def test_lint_and_fit(client):
    response = client.post("/api/lint", json={"command": "vllm serve m --max-model-len 4096 --no-such-flag"})
    assert response.status_code == 200
    assert response.json()["valid"] is False
    assert any(f["option"] == "--no-such-flag" for f in response.json()["findings"])
    assert client.post("/api/lint", json={}).status_code == 422
    assert client.post("/api/lint", json={"argv": ["vllm", "serve", "m"], "engine": "nope"}).status_code == 422
    fit = client.post("/api/fit", json={"model": MODEL, "hardware": "rtx_5090", "variant": "nvfp4"})
    assert fit.status_code == 200, fit.text
    assert fit.json()["ok"] is True and fit.json()["report"]["fits"] is True
    assert client.post("/api/fit", json={"model": "/etc/passwd", "hardware": "h200"}).status_code == 404
    assert client.post("/api/fit", json={"model": MODEL, "hardware": "nope"}).status_code == 422


@pytest.mark.parametrize("path", ["/", "/catalog", "/api/models.json", "/static/builder.js", "/openapi.json",
                                  "/api/nope.json"])
def test_security_headers_everywhere(client, path):
    response = client.get(path)
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp and "style-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"


def test_openapi_schema_lists_the_api(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/api/plan", "/api/lint", "/api/fit", "/api/{path}"} <= set(paths)
    assert "/" not in paths


def test_wrong_method_is_json(client):
    response = client.put("/api/plan", json={})
    assert response.status_code == 405
    assert "error" in response.json()
