"""The landing page and the builder's answer in a real Chromium (Debian's ``chromium``, driven by
playwright) against ``servekit web``'s application under uvicorn on 127.0.0.1, at a desktop
(1400 px) and a phone (390 px) width.

Each page is screenshotted into ``$SERVEKIT_TEST_ARTIFACTS/web`` (default: ``.test-artifacts/web``
in the checkout, git-ignored) and the tests assert what the screenshots show: the models, the
engine selector, the memory chart with one bar per memory term of the CLI's fit report, the
refused plan's findings, no sideways scrolling at phone width, no console errors, and the
CLI's verdict (``servekit plan`` and ``servekit fit`` run as processes) for a sample of
selections. axe-core (``scripts/install_axe.sh`` brings it from the npm registry into a cache
folder) checks each page for serious and critical accessibility violations.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlencode

import pytest

from servekit.web.memory_chart import TERMS

from .conftest import CHROMIUM, MODEL, ROOT

AXE = Path(os.environ.get("SERVEKIT_AXE_DIR") or ROOT / ".servekit-ci" / "axe") / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = (1400, 390)
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (run scripts/install_system_tools.sh)")
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

SEED_SPEC = {"model": MODEL, "hardware": "rtx_5090", "feature": ["spec_decoding", "text_only"]}
SEVERAL_NODES = {"model": LLAMA, "hardware": "h100", "strategy": "multi_node_tp", "nodes": "2"}
REFUSED = {"model": MODEL, "hardware": "h100", "tp": "1"}
PAGES = {"landing": "/?" + urlencode({"runs_on": "h100", "gpus": "2"}),
         "seed-spec": "/?" + urlencode(SEED_SPEC, doseq=True),
         "several-nodes": "/?" + urlencode(SEVERAL_NODES),
         "refused": "/?" + urlencode(REFUSED)}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from servekit.cli import run; run()", *args],
                          capture_output=True, text=True, check=False)


def cli_args(query: dict) -> list[str]:
    """``servekit plan`` / ``fit`` options for a page query (the page uses the CLI's names)."""
    out = []
    for key, value in query.items():
        if key == "model":
            continue
        for item in value if isinstance(value, list) else [value]:
            out += [f"--{key.replace('_', '-')}", item]
    return out


@lru_cache(maxsize=None)
def cli_plan(query_items: tuple) -> tuple[int, dict]:
    """(exit status, JSON document) of ``servekit plan`` for a page query."""
    query = {k: list(v) if isinstance(v, tuple) else v for k, v in query_items}
    done = cli("plan", query["model"], *cli_args(query), "--format", "json")
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def plan_of(query: dict) -> tuple[int, dict]:
    return cli_plan(tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in query.items()))


@pytest.fixture(params=WIDTHS, ids=lambda w: f"{w}px")
def page(request, browser, live_server):
    width = request.param
    context = browser.new_context(base_url=live_server, viewport={"width": width, "height": 900},
                                  is_mobile=width < 600)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    tab.width = width
    yield tab
    context.close()
    assert not errors, f"console errors: {errors}"


def show(page, name: str, artifacts: Path) -> None:
    """Open page ``name``, check it does not scroll sideways, and screenshot it."""
    response = page.goto(PAGES[name])
    assert response is not None and response.status == 200
    overflow = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{name} scrolls sideways by {overflow} px at {page.width} px"
    shot = artifacts / f"{name}-{page.width}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


def verdict(page) -> str:
    return page.locator("#plan").get_attribute("data-verdict")


def test_landing_lists_the_models_and_what_runs_on_a_device(page, artifacts):
    show(page, "landing", artifacts)
    listed = {m["id"] for m in json.loads(cli("list", "--format", "json").stdout)}
    links = page.locator("#models .card h3 a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    assert sorted(links) == sorted(f"/?model={m}" for m in listed)
    suggested = page.locator("#model-list option").evaluate_all("els => els.map(e => e.value)")
    assert listed <= set(suggested)
    rows = json.loads(cli("fit", "--all", "--hardware", "h100", "--gpus", "2", "--format", "json").stdout)
    cells = page.locator(".runs-table tbody tr").evaluate_all(
        "rows => rows.map(r => [r.cells[0].textContent.trim(), r.cells[1].textContent.trim(), r.cells[2].textContent.trim()])")
    assert [(r["recipe"], r["variant"], "fits" if r["fits"] else "no") for r in rows] == \
        [(name, variant, "fits" if fits == "fits" else fits.split(":")[0]) for name, variant, fits in cells]


def test_seed_plan_with_spec_decoding_draws_the_clis_memory(page, artifacts):
    show(page, "seed-spec", artifacts)
    status, payload = plan_of(SEED_SPEC)
    assert verdict(page) == ("starts" if status == 0 else "refused")
    engine = page.locator('select[name="engine"]')
    assert engine.is_visible() and engine.input_value() == "vllm"
    assert "--speculative-config" in page.locator("#cmd-command").text_content()
    assert page.locator("#cmd-command").text_content() == payload["command"]
    report = payload["servekit"]["checks"]["fit"][0]["report"]
    bars = page.locator("svg.memchart rect.term")
    assert bars.count() == len(TERMS)
    drawn = dict(zip(bars.evaluate_all("els => els.map(e => e.dataset.term)"),
                     map(float, bars.evaluate_all("els => els.map(e => e.dataset.gib)")), strict=True))
    assert drawn == {key: pytest.approx(max(report[field], 0.0), abs=1e-3) for key, field, _ in TERMS}
    legend = page.locator("figure.memory .legend").text_content()
    assert f"{report['weights_gib_per_rank']:.2f} GiB" in legend
    figures = page.locator("dl.figures").first.text_content()
    assert f"{report['kv_tokens']:,} tokens" in figures  # thousands separators, not raw numbers
    assert page.locator("#f-hardware-shown").text_content().startswith("RTX 5090 (rtx_5090): fits")
    cut = page.evaluate(SELECTS_CUT)
    assert cut == [], f"select labels cut at {page.width} px: {cut}"


SELECTS_CUT = """() => [...document.querySelectorAll('select')].flatMap(s => {
  const pen = document.createElement('canvas').getContext('2d'), style = getComputedStyle(s);
  pen.font = style.font;
  const room = s.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;  // the arrow
  const text = s.options[s.selectedIndex].text;
  return pen.measureText(text).width > room ? [text] : [];
})"""


def test_several_node_plan_shows_every_machine(page, artifacts):
    show(page, "several-nodes", artifacts)
    status, payload = plan_of(SEVERAL_NODES)
    assert verdict(page) == ("starts" if status == 0 else "refused")
    assert page.locator("#cmd-head").text_content() == payload["head_command"]
    assert page.locator("#cmd-worker-2").text_content() == payload["worker_commands"][0]
    flagged = page.locator("#cmd-head .ln.flagged").all_text_contents()
    options = {f["option"] for f in payload["servekit"]["checks"]["flags"][0]["findings"] if f.get("option")}
    assert flagged and all(line.strip().split()[0] in options for line in flagged)


def test_refused_plan_shows_its_findings_and_fixes(page, artifacts):
    show(page, "refused", artifacts)
    status, payload = plan_of(REFUSED)
    assert status == 1 and verdict(page) == "refused"
    errors = [f for r in payload["servekit"]["checks"]["fit"] for f in r["findings"] if f["severity"] == "error"]
    assert errors
    listed = page.locator("#plan ol.checks").first.text_content()
    for finding in errors:
        assert finding["message"] in listed and finding["fix"] in listed
    assert page.locator("#plan .badge-error").count() == len(errors)
    assert page.locator(".fit.fail .verdict").first.is_visible()


SAMPLE = [
    {"model": MODEL, "hardware": "h100", "tp": "1"},
    {"model": MODEL, "hardware": "h100", "tp": "2"},
    {"model": MODEL, "hardware": "rtx_5090"},
    {"model": MODEL, "hardware": "rtx_5090", "feature": ["spec_decoding"]},
    {"model": MODEL, "hardware": "rtx_5090", "max_model_len": "16384", "gpu_memory_utilization": "0.8"},
    {"model": LLAMA, "hardware": "h100", "strategy": "multi_node_tp", "nodes": "2"},
]


@pytest.mark.parametrize("query", SAMPLE, ids=lambda q: "-".join(str(v) for k, v in q.items() if k != "model"))
def test_the_page_gives_the_clis_verdict(browser, live_server, query):
    """``servekit plan``'s exit status and ``servekit fit``'s verdict for the same options are
    the page's verdict and its memory verdict."""
    context = browser.new_context(base_url=live_server)
    try:
        tab = context.new_page()
        tab.goto("/?" + urlencode(query, doseq=True))
        status, payload = plan_of(query)
        assert verdict(tab) == ("starts" if status == 0 else "refused")
        fit_args = [a for a in cli_args(query) if not a.startswith("--feature") and a != "spec_decoding"]
        if "feature" not in query:  # fit takes no features: compare where the launch is the same
            fitted = cli("fit", query["model"], *fit_args)
            page_fits = tab.locator(".fit").first.get_attribute("class").split()[-1] == "ok"
            assert page_fits == (fitted.returncode == 0), fitted.stdout
        assert tab.locator("#cmd-command, #cmd-head").first.text_content() == payload.get("command", payload.get("head_command"))
    finally:
        context.close()


def test_tabs_and_overrides_work_without_javascript(browser, live_server, artifacts):
    context = browser.new_context(base_url=live_server, java_script_enabled=False, viewport={"width": 390, "height": 844})
    try:
        tab = context.new_page()
        tab.goto("/?" + urlencode({"model": MODEL, "hardware": "h100"}))
        assert tab.locator("#panel-command").is_visible() and not tab.locator("#panel-k8s").is_visible()
        tab.click('label[for="form-k8s"]')
        assert tab.locator("#panel-k8s").is_visible() and not tab.locator("#panel-command").is_visible()
        assert "kind: Deployment" in tab.locator("#k8s-k8s").text_content()
        tab.fill("#o-tp", "1")
        tab.click("#update")
        tab.wait_for_url("**tp=1**")
        assert verdict(tab) == "refused"
        tab.screenshot(path=str(artifacts / "refused-no-js-390.png"), full_page=True)
    finally:
        context.close()


@pytest.mark.skipif(not AXE.exists(), reason=f"axe-core is not installed at {AXE} (run scripts/install_axe.sh)")
@pytest.mark.parametrize("name", list(PAGES))
def test_no_serious_accessibility_violations(browser, live_server, name):
    """axe-core's rules (WCAG 2 A and AA, best practices) on each page, at both widths."""
    source = AXE.read_text(encoding="utf-8")
    for width in WIDTHS:
        context = browser.new_context(base_url=live_server, viewport={"width": width, "height": 900}, bypass_csp=True)
        try:
            tab = context.new_page()
            tab.goto(PAGES[name])
            tab.evaluate(source)
            result = tab.evaluate("axe.run(document, {resultTypes: ['violations']})")
            serious = [(v["id"], v["help"], [n["target"] for n in v["nodes"]][:3]) for v in result["violations"]
                       if v["impact"] in ("serious", "critical")]
            assert serious == [], f"{name} at {width} px: {serious}"
        finally:
            context.close()


def test_an_open_tab_stays_open_when_a_choice_changes(browser, live_server):
    context = browser.new_context(base_url=live_server)
    errors: list[str] = []
    try:
        tab = context.new_page()
        tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        tab.goto("/?" + urlencode({"model": MODEL, "hardware": "rtx_5090"}))
        tab.click('label[for="form-docker"]')
        assert tab.locator("#panel-docker").is_visible()
        tab.select_option("#f-hardware", "rtx_5090_2x")
        tab.wait_for_url("**hardware=rtx_5090_2x**")
        tab.wait_for_function("!document.body.hasAttribute('aria-busy')")
        assert tab.locator("#f-hardware").input_value() == "rtx_5090_2x"
        assert tab.locator("#panel-docker").is_visible() and not tab.locator("#panel-command").is_visible()
    finally:
        context.close()
    assert errors == []
