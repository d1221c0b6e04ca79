"""The builder in a real Chromium (Debian's ``chromium``, driven by playwright) against uvicorn.

Skipped when /usr/bin/chromium is absent (``scripts/install_system_tools.sh`` installs it).
Screenshots go to ``$SERVEKIT_TEST_ARTIFACTS/web`` (default: ``.test-artifacts/web``, git-ignored).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import CHROMIUM, MODEL


pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (run scripts/install_system_tools.sh)")
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")


def cli_command(*args: str) -> str:
    """The command ``servekit plan`` prints for these arguments (its JSON form, as a process)."""
    out = subprocess.run([sys.executable, "-c", "from servekit.cli import run; run()", "plan", MODEL, *args,
                          "--format", "json"],
                         capture_output=True, text=True, check=False)
    assert out.stdout, out.stderr
    return json.loads(out.stdout)["command"]


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server, viewport={"width": 1200, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield tab
    context.close()
    assert not errors, errors


def command_text(page) -> str:
    return page.locator("#cmd-command").text_content()


def pick(page, selector: str, value: str, wait_for: str) -> None:
    page.focus(selector)
    page.select_option(selector, value)
    page.wait_for_url(f"**{wait_for}**")
    page.wait_for_function("!document.body.hasAttribute('aria-busy')")


def test_pick_a_model_and_hardware(page, artifacts):
    page.goto("/")
    page.fill("#model", MODEL)
    page.locator("#model").dispatch_event("change")
    page.wait_for_selector("#f-hardware")
    pick(page, "#f-hardware", "rtx_5090", "hardware=rtx_5090")
    assert command_text(page) == cli_command("--hardware", "rtx_5090")
    assert page.evaluate("document.activeElement.id") == "f-hardware"  # focus survives the update
    verdict = page.locator("#fit .verdict").first.text_content()
    assert "fits" in verdict
    page.screenshot(path=str(artifacts / "builder-rtx_5090.png"), full_page=True)


def test_toggling_a_feature_and_a_mode_updates_the_command(page, artifacts):
    page.goto(f"/?model={MODEL}&hardware=b200")
    before = command_text(page)
    page.check("#feat-spec_decoding")
    page.wait_for_url("**feature=spec_decoding**")
    page.wait_for_function("!document.body.hasAttribute('aria-busy')")
    with_spec = command_text(page)
    assert with_spec != before
    assert with_spec == cli_command("--hardware", "b200", "--feature", "spec_decoding")
    modes = page.locator("#mode-spec_decoding option").evaluate_all("els => els.map(e => e.value)")
    other = next(v for v in modes if v and v != "spec_decoding=mtp")
    pick(page, "#mode-spec_decoding", other, "mode=spec_decoding")
    assert command_text(page) == cli_command("--hardware", "b200", "--feature", "spec_decoding", "--mode", other)
    page.uncheck("#feat-reasoning")
    page.wait_for_url("**no_feature=reasoning**")
    page.wait_for_function("!document.body.hasAttribute('aria-busy')")
    assert "--reasoning-parser" not in command_text(page)
    page.screenshot(path=str(artifacts / "builder-b200-spec.png"), full_page=True)


def test_invalid_combinations_are_not_offered(page):
    page.goto(f"/?model={MODEL}&hardware=rtx_5090&feature=spec_decoding")
    strategies = page.locator("#f-strategy option").evaluate_all("els => els.map(e => e.value)")
    assert strategies == ["", "single_node_tp"]
    modes = page.locator("#mode-spec_decoding option").evaluate_all("els => els.map(e => e.value)")
    assert modes == ["", "spec_decoding=mtp"]
    hardware = page.locator("#f-hardware option").evaluate_all("els => els.map(e => e.value)")
    assert "rtx_5090" in hardware and "h100" not in hardware


def test_copy_button_copies_exactly_the_command(page):
    page.goto(f"/?model={MODEL}&hardware=rtx_5090")
    button = page.locator('button[data-copy="cmd-command"]')
    assert button.is_visible()
    button.click()
    page.wait_for_function("document.querySelector('button[data-copy=\"cmd-command\"]').hasAttribute('data-copied')")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == command_text(page) == cli_command("--hardware", "rtx_5090")


def test_a_shared_url_restores_the_selection(page, browser, live_server, artifacts):
    page.goto(f"/?model={MODEL}")
    pick(page, "#f-hardware", "rtx_5090_2x", "hardware=rtx_5090_2x")
    page.check("#feat-long_context")
    page.wait_for_url("**feature=long_context**")
    page.wait_for_function("!document.body.hasAttribute('aria-busy')")
    shared, command = page.url, command_text(page)
    other = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        phone = other.new_page()
        phone.goto(shared)
        assert phone.locator("#f-hardware").input_value() == "rtx_5090_2x"
        assert phone.locator("#feat-long_context").is_checked()
        assert phone.locator("#cmd-command").text_content() == command
        overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, "the page scrolls sideways at phone width"
        phone.screenshot(path=str(artifacts / "builder-phone.png"), full_page=True)
    finally:
        other.close()


def test_the_form_works_without_javascript(browser, live_server, artifacts):
    context = browser.new_context(base_url=live_server, java_script_enabled=False)
    try:
        tab = context.new_page()
        tab.goto(f"/?model={MODEL}")
        tab.select_option("#f-hardware", "rtx_5090")
        tab.click("#update")
        tab.wait_for_url("**hardware=rtx_5090**")
        assert tab.locator("#cmd-command").text_content() == cli_command("--hardware", "rtx_5090")
        assert not tab.locator('button[data-copy="cmd-command"]').is_visible()
        tab.screenshot(path=str(artifacts / "builder-no-js.png"), full_page=True)
    finally:
        context.close()


def test_keyboard_reaches_the_controls(page):
    page.goto(f"/?model={MODEL}&hardware=rtx_5090")
    page.focus("#model")
    reached = set()
    for _ in range(12):
        page.keyboard.press("Tab")
        reached.add(page.evaluate("document.activeElement.id"))
    assert {"f-hardware", "f-variant", "f-strategy"} <= reached


MARKUP_PAGES = ["/", f"/?model={MODEL}", f"/?model={MODEL}&hardware=rtx_5090&feature=tool_calling",
                "/catalog", "/catalog?q=qwen", "/catalog?feature=tool_calling",
                "/?model=%3Cscript%3Ealert(3)%3C/script%3E", "/catalog?hardware=%3Cimg%20src=x%20onerror=alert(4)%3E"]


def test_markup_in_recipe_text_renders_inert_in_the_browser(browser, markup_server, artifacts):
    """Every page of a catalog whose recipe text holds ``<script>alert(1)</script>`` (and an
    ``onerror`` image), and pages that echo markup from the query: nothing runs, no dialog
    opens, no script or image is made of it, and the text shows as typed."""
    from .conftest import SCRIPT

    context = browser.new_context(base_url=markup_server)
    dialogs: list[str] = []
    problems: list[str] = []
    try:
        tab = context.new_page()
        tab.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        tab.on("pageerror", lambda exc: problems.append(str(exc)))
        tab.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
        for path in MARKUP_PAGES:
            response = tab.goto(path)
            tab.wait_for_load_state("networkidle")
            assert response is not None and response.status in (200, 404), path
            assert tab.locator("script:not([src])").count() == 0, path
            assert tab.locator("img").count() == 0, path
            if "model=Qwen" in path:
                assert SCRIPT in tab.locator(".recipe-desc").text_content(), path
            if path.startswith("/catalog?q") or path.startswith("/catalog?feature"):
                assert any(SCRIPT in text for text in tab.locator("td .desc").all_text_contents()), path
        tab.goto(f"/?model={MODEL}&hardware=rtx_5090&feature=tool_calling")
        tab.screenshot(path=str(artifacts / "markup-inert.png"), full_page=True)
    finally:
        context.close()
    assert dialogs == [], dialogs
    assert [p for p in problems if "404" not in p] == [], problems
    assert (artifacts / "markup-inert.png").stat().st_size > 0
