"""Benchmarks run by ``make bench``: each module reports ratios against a same-run baseline."""
