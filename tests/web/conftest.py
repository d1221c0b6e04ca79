"""Fixtures of the web tests: the application over the bundled catalog, a catalog whose recipe
text holds markup, a real uvicorn server on a free loopback port, Debian's Chromium driven by
playwright, and the folder the browser tests write their screenshots to."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fastapi.testclient import TestClient

from servekit.processes import free_port
from servekit.web.server import create_app

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "src" / "servekit" / "catalog_data"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
SCRIPT = "<script>alert(1)</script>"
MODEL = "Qwen/Qwen3.8-27B"


@pytest.fixture(scope="session")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(), raise_server_exceptions=False) as test_client:
        yield test_client


def write_markup_catalog(root: Path) -> Path:
    """The bundled catalog with markup in a recipe's title, description and feature text."""
    shutil.copytree(BUNDLED, root)
    recipe = root / "models" / "Qwen" / "Qwen3.8-27B.yaml"
    text = recipe.read_text(encoding="utf-8")
    text = text.replace('title: "Qwen3.8-27B"', f'title: "Qwen3.8-27B {SCRIPT}"', 1)
    text = text.replace('  description: "Dense 27B', f'  description: "{SCRIPT} <img src=x onerror=alert(2)> Dense 27B', 1)
    text = text.replace("description: Automatic tool choice", f"description: {SCRIPT} Automatic tool choice", 1)
    assert text.count(SCRIPT) >= 2, "the fixture recipe changed; update the markup catalog"
    recipe.write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def markup_catalog(tmp_path_factory) -> Path:
    return write_markup_catalog(tmp_path_factory.mktemp("markup") / "catalog")


@pytest.fixture(scope="session")
def markup_client(markup_catalog) -> Iterator[TestClient]:
    with TestClient(create_app(str(markup_catalog)), raise_server_exceptions=False) as test_client:
        yield test_client


def serve(app) -> Iterator[str]:
    """Run ``app`` in a uvicorn server on a free loopback port until the generator is closed."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the uvicorn server did not start within 20 s")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    """A uvicorn server with the bundled catalog on 127.0.0.1 (stopped after the session)."""
    yield from serve(create_app())


@pytest.fixture(scope="session")
def markup_server(markup_catalog) -> Iterator[str]:
    """A uvicorn server with the markup catalog on 127.0.0.1 (stopped after the session)."""
    yield from serve(create_app(str(markup_catalog)))


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where the browser tests keep their screenshots: ``$SERVEKIT_TEST_ARTIFACTS/web``, by
    default ``.test-artifacts/web`` in the checkout (git-ignored)."""
    folder = Path(os.environ.get("SERVEKIT_TEST_ARTIFACTS") or ROOT / ".test-artifacts") / "web"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium (``/usr/bin/chromium``), headless, through playwright's own driver."""
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium (run scripts/install_system_tools.sh)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
