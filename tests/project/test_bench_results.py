"""Benchmark figures come from runs: benches record rows, the page is rendered from them."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from benchmarks import render, results


@pytest.fixture
def bench():
    """A scratch bench name whose rows are forgotten afterwards."""
    yield "bench_scratch"
    results.clear("bench_scratch")


def test_record_adds_a_row_to_the_calling_bench(bench):
    """One call records a row; its raw numbers are kept as floats for machines."""
    results.record("a thing", baseline="2 s", measured="1 s", ratio="2x", bench=bench, s=1)
    (row,) = results.rows(bench)
    assert (row.what, row.ratio, row.values) == ("a thing", "2x", {"s": 1.0})


def test_record_names_the_bench_after_the_calling_module():
    """Without ``bench=``, the row belongs to the module that recorded it."""
    results.record("x", baseline="1", measured="1", ratio="1x")
    try:
        assert [r.what for r in results.rows("test_bench_results")] == ["x"]
    finally:
        results.clear("test_bench_results")


def test_a_document_says_when_and_on_how_many_cores(bench):
    """The JSON of a run carries its date, the core count and the Python version."""
    results.record("a", baseline="1", measured="1", ratio="1x", bench=bench)
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    doc = results.document(bench, title="T", seconds=1.23, now=now)
    assert doc["date"] == "2026-01-02T03:04:05Z"
    assert doc["cores"] >= 1
    assert doc["python"]
    assert doc["seconds"] == 1.2
    assert doc["rows"][0]["what"] == "a"


def test_written_documents_load_back_sorted(tmp_path, bench):
    """write() then load() gives the documents back, one file a bench."""
    for name in ("bench_b", "bench_a"):
        results.write({"bench": name, "rows": []}, tmp_path)
    assert [d["bench"] for d in results.load(tmp_path)] == ["bench_a", "bench_b"]


def test_the_page_shows_each_row_and_the_run_that_made_it():
    """A section has the bench's title, its run's date and cores, and one table line a row."""
    doc = {
        "bench": "bench_x",
        "title": "What x measures.",
        "date": "2026-01-02T03:04:05Z",
        "cores": 2,
        "machine": "x86_64",
        "python": "3.11.7",
        "seconds": 9.0,
        "rows": [{"what": "a | b", "baseline": "1 s", "measured": "2 s", "ratio": "2x"}],
    }
    page = render.render([doc])
    assert "## bench_x" in page
    assert "on 2 cores" in page
    assert "2026-01-02" in page
    assert "| a \\| b | 1 s | 2 s | 2x |" in page


def test_the_committed_benchmark_page_is_what_the_results_render():
    """docs/benchmarks.md is render() of docs/benchmarks/*.json (python -m benchmarks.render)."""
    assert render.PAGE.read_text(encoding="utf-8") == render.render(results.load())


def test_every_committed_result_says_when_and_where_it_was_run():
    """Each results file has a date, a core count and rows with all four cells."""
    docs = results.load()
    assert docs, "no results committed under docs/benchmarks/"
    for doc in docs:
        assert doc["date"], doc["bench"]
        assert doc["cores"] >= 1, doc["bench"]
        for row in doc["rows"]:
            assert {"what", "baseline", "measured", "ratio"} <= set(row), doc["bench"]


def test_the_readme_headlines_are_the_recorded_ratios():
    """The README's headline ratios are rendered from the committed results."""
    readme = render.README.read_text(encoding="utf-8")
    assert readme == render.with_headlines(readme, results.load())
    assert "<!-- bench-headlines -->\n- " in readme


def test_headlines_without_results_ask_for_a_run():
    """With no results the headline block says to run make bench, never a stale figure."""
    text = "a\n<!-- bench-headlines -->\nold 99x\n<!-- /bench-headlines -->\nb\n"
    assert "old 99x" not in render.with_headlines(text, [])
    assert "make bench" in render.with_headlines(text, [])


def test_results_files_are_plain_json():
    """The committed results parse as JSON objects (machine-readable)."""
    for path in results.RESULTS_DIR.glob("*.json"):
        assert isinstance(json.loads(path.read_text(encoding="utf-8")), dict)


def test_the_guides_prose_figures_are_the_recorded_ones():
    """Each ``bench-figure`` span in the docs is rendered from the committed results."""
    pages = render.figure_pages()
    assert pages, "no docs page quotes a bench figure"
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert text == render.with_figures(text, results.load()), (
            f"{page.name} has stale bench figures: run python -m benchmarks.render"
        )


def test_every_prose_figure_is_quoted_on_a_page():
    """A figure named in ``render.FIGURES`` but quoted nowhere is dead code."""
    quoted = " ".join(p.read_text(encoding="utf-8") for p in render.figure_pages())
    for name in render.FIGURES:
        assert f"<!-- bench-figure: {name} -->" in quoted, name


def test_a_prose_figure_without_a_result_asks_for_its_bench_run():
    """With no recorded row the span says which bench to run, never a stale figure."""
    text = "a <!-- bench-figure: redis-hung -->1.0 s<!-- /bench-figure --> b"
    rendered = render.with_figures(text, [])
    assert "1.0 s" not in rendered
    assert "python -m benchmarks bench_stores" in rendered


def test_an_unknown_prose_figure_is_an_error():
    """A span naming no figure fails the render instead of keeping its text."""
    with pytest.raises(ValueError, match="nope"):
        render.with_figures("<!-- bench-figure: nope -->x<!-- /bench-figure -->", [])
