"""Every published strategy on your own transcripts: ``python -m benchmarks.peers PATH...``.

No clearing, the peers' clearing (LangChain's ``ClearToolUsesEdit``, SWE-agent's last five
observations, the "Complexity Trap" masking, the Agents SDK's ``ToolOutputTrimmer`` where it
is installed) and slimtools' two ways, per source and in total, as ``bench_clearing`` reports
them on the shared runs. ``--cache NAME`` prices the bill (default ``anthropic``).
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.peers.compare import compare, published_strategies
from slimtools.clearing.pricing import PRESETS
from slimtools.transcripts import iter_transcripts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="transcript files or folders")
    parser.add_argument("--cache", default="anthropic", choices=sorted(PRESETS))
    args = parser.parse_args(argv)
    cache = PRESETS[args.cache]
    errors: list[Exception] = []
    runs = list(iter_transcripts(*args.paths, on_error=errors.append))
    for error in errors:
        print(f"peers: {error}", file=sys.stderr)
    if not runs:
        print("peers: no transcripts found", file=sys.stderr)
        return 1
    result = compare(runs, published_strategies(cache), cache=cache)
    print("\n\n".join(result.table(group) for group in result.groups))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
