"""The reproduction report in a real browser: headless Chromium (Debian's ``chromium``,
installed by ``make test`` through ``make browser``) driven by Playwright.

Opens ``report.html`` written by ``atmsim reproduce buddhikot92 --quick`` and checks that
it renders without console errors or failed requests and that every figure loads; the
screenshot goes to the test's tmp_path and to ``test-output/`` in the repository root
(git-ignored) for a human to look at."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import ROOT, reproduce_quick

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory, quick_store) -> Path:
    return reproduce_quick(tmp_path_factory.mktemp("reproduce-browser"), "buddhikot92", quick_store)


@pytest.fixture(scope="module")
def index_dir(quick_store) -> Path:
    """The directory `reproduce all --quick` wrote (the session's quick_store): report.html
    is the index and buddhikot92.html links back to it."""
    return quick_store.parent


def _open(page_path: Path, tmp_path: Path, shot_name: str) -> dict:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (make test does) to install Debian's chromium")
    console_errors: list[str] = []
    failed: list[str] = []
    bad_status: list[str] = []
    with sync_api.sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            user_data_dir=str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM),
            headless=True, args=CHROMIUM_ARGS, viewport={"width": 1280, "height": 900})
        try:
            page = ctx.new_page()
            page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: console_errors.append(str(e)))
            page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
            page.on("response", lambda r: bad_status.append(f"{r.url}: {r.status}") if r.status >= 400 else None)
            page.goto(page_path.resolve().as_uri(), wait_until="load")
            imgs = page.eval_on_selector_all(
                "img", "els => els.map(e => ({src: e.getAttribute('src'), complete: e.complete, w: e.naturalWidth}))")
            links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
            title = page.title()
            shot = tmp_path / shot_name
            page.screenshot(path=str(shot), full_page=True)
        finally:
            ctx.close()
    keep = ROOT / "test-output"
    keep.mkdir(exist_ok=True)
    shutil.copy(shot, keep / shot_name)
    return {"console": console_errors, "failed": failed, "status": bad_status, "imgs": imgs,
            "links": links, "title": title, "shot": shot}


def test_report_renders_in_chromium(report_dir, tmp_path):
    r = _open(report_dir / "report.html", tmp_path, "report-buddhikot92.png")
    assert r["console"] == [], r["console"]
    assert r["failed"] == [], r["failed"]
    assert r["status"] == [], r["status"]
    assert len(r["imgs"]) >= 2, "the page should show the Figure 13 and Figure 14 plots"
    for img in r["imgs"]:
        assert img["complete"] and img["w"] > 0, f"image did not load: {img['src']}"
    assert "buddhikot92" in r["title"]
    # every local link (figures' SVG, CSV, store) points at a file that exists
    for href in r["links"]:
        if "://" not in href and not href.startswith("#"):
            assert (report_dir / href).exists(), href
    assert r["shot"].stat().st_size > 10_000


def test_index_and_paper_page_render_in_chromium(index_dir, tmp_path):
    idx = _open(index_dir / "report.html", tmp_path, "report-all-index.png")
    assert idx["console"] == [] and idx["failed"] == [] and idx["status"] == []
    assert "buddhikot92.html" in idx["links"]
    page = _open(index_dir / "buddhikot92.html", tmp_path, "report-all-buddhikot92.png")
    assert page["console"] == [] and page["failed"] == [] and page["status"] == []
    assert "report.html" in page["links"]
    assert len(page["imgs"]) >= 2 and all(i["complete"] and i["w"] > 0 for i in page["imgs"])
