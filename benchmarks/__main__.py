"""Run every ``benchmarks/bench_*.py`` (or those named on the command line) in turn.

Each bench's recorded rows (:func:`benchmarks.results.record`) are written to
``docs/benchmarks/<bench>.json`` as soon as it finishes, and the docs' benchmark page is
rendered from all the results at the end, so a bench that fails keeps the others' figures.
A run of every bench also re-runs the commands whose output the guides quote
(:mod:`benchmarks.figures`).
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

from benchmarks import figures, render, results


def main(argv: list[str]) -> None:
    here = Path(__file__).parent
    names = [n.removesuffix(".py") for n in argv] or sorted(p.stem for p in here.glob("bench_*.py"))
    for name in names:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"\n=== {name} ===", flush=True)
        results.clear(name)
        start = time.perf_counter()
        module.main()
        seconds = time.perf_counter() - start
        print(f"({name}: {seconds:.1f}s)", flush=True)
        title = (module.__doc__ or name).strip().splitlines()[0]
        results.write(results.document(name, title=title, seconds=seconds))
    print(f"\nwrote {render.write_page()}", flush=True)
    if not argv:  # a whole run also refreshes the console output the guides quote
        figures.main()


if __name__ == "__main__":
    main(sys.argv[1:])
