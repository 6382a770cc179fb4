"""Run every ``benchmarks/bench_*.py`` (or those named on the command line) in turn."""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> None:
    here = Path(__file__).parent
    names = argv or sorted(p.stem for p in here.glob("bench_*.py"))
    for name in names:
        module = importlib.import_module(f"benchmarks.{name.removesuffix('.py')}")
        print(f"\n=== {name} ===", flush=True)
        start = time.perf_counter()
        module.main()
        print(f"({name}: {time.perf_counter() - start:.1f}s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
