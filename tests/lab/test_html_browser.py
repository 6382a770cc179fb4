"""The ``analyze --html`` report in a real browser (headless Chromium): drawn, true, offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image, ImageStat

from tests._browser import chromium, dump_dom, requests_while_loading, screenshot
from tests.lab.cli_helpers import DATA, cli
from tests.lab.test_html_report import Page, at

pytestmark = pytest.mark.subprocess

SOURCES = (DATA / "claude_code", DATA / "openai_chat", DATA / "swe_agent")


@pytest.fixture
def report(capsys, tmp_path) -> tuple[Path, dict]:
    """A report of several formats, and the ``analyze --json`` of the same files."""
    chromium()
    out = tmp_path / "report.html"
    status, _, err = cli(capsys, "analyze", *map(str, SOURCES), "--html", str(out))
    assert status == 0, err
    status, printed, err = cli(capsys, "analyze", *map(str, SOURCES), "--json")
    assert status == 0, err
    return out, json.loads(printed)


def test_the_figures_the_browser_shows_are_the_jsons(report):
    """Read from the DOM Chromium built, every figure equals ``analyze --json``'s."""
    path, document = report
    page = Page()
    page.feed(dump_dom(path))
    assert len(page.figures) > 10
    for keys, value in page.figures:
        assert at(document, keys) == value, keys


def test_the_script_draws_a_bar_per_tool_result(report):
    """After the page's script ran, the timeline shows one bar per result of the run with
    the most results (the one it opens on)."""
    path, _ = report
    dom = dump_dom(path)
    page = Page()
    page.feed(dom)
    assert page.data is not None
    first = max((run["events"] for run in page.data["runs"]), key=len)
    strip = dom[dom.index('id="strip"') : dom.index('id="detail"')]
    assert strip.count("<rect") == len(first) > 0


def test_the_rendered_page_is_not_blank(report, tmp_path):
    """A screenshot of the report has drawn content: many colours, not one flat fill."""
    path, _ = report
    picture = tmp_path / "report.png"
    screenshot(path, picture, width=1200, height=1400)
    with Image.open(picture) as image:
        rgb = image.convert("RGB")
        assert rgb.size == (1200, 1400)
        colours = rgb.getcolors(maxcolors=1 << 20) or []
        assert len(colours) > 50
        assert max(ImageStat.Stat(rgb).stddev) > 10


def test_a_page_that_loads_something_is_caught(tmp_path):
    """The network check sees a request when a page makes one (it is not vacuous)."""
    chromium()
    page = tmp_path / "fetching.html"
    page.write_text("<!DOCTYPE html><img src='http://example.invalid/pixel.png'>")
    seen = requests_while_loading(page)
    assert any(b"example.invalid" in first for first in seen)


def test_the_report_makes_no_network_request(report):
    """Loading the report in Chromium opens no connection at all."""
    path, _ = report
    assert requests_while_loading(path) == []
