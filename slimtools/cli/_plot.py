"""Plots for ``analyze --plot`` and ``bill --plot``: resident tool tokens per round above,
cumulative billed input below, one line per strategy. matplotlib (the ``cli`` extra) is
imported only here, when a plot is asked for, with the non-interactive Agg backend.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

from slimtools.cli._output import CLI_EXTRA

FORMATS = (".png", ".svg", ".pdf")
SIZE = (10.0, 7.0)  # inches; at DPI, a 1000 x 700 PNG
DPI = 100


class PlotError(Exception):
    """A plot cannot be drawn or written; the message says why in one line."""


def plot_path(path: str) -> str:
    """An argparse type for ``--plot``: refuse, before any work, a plot that cannot be drawn
    (a suffix not in :data:`FORMATS`, or no matplotlib)."""
    if Path(path).suffix.lower() not in FORMATS:
        raise argparse.ArgumentTypeError(f"--plot writes {', '.join(FORMATS)} files, got {path!r}")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise argparse.ArgumentTypeError(f"--plot needs matplotlib: {CLI_EXTRA}") from None
    return path


@dataclass(frozen=True)
class Curve:
    """One strategy's line: resident tool tokens and the input billed, per round."""

    label: str
    resident: Sequence[int]
    billed: Sequence[float]
    dashed: bool = False


def plot_rounds(
    curves: Sequence[Curve],
    path: str,
    *,
    title: str,
    billed_label: str,
    runs: Sequence[int] | None = None,
) -> None:
    """Draw the two panels (see :func:`draw_rounds`) and write ``path`` (its suffix picks
    the format).

    Raises:
        PlotError: the file cannot be written.
    """
    plt = _pyplot()
    figure = draw_rounds(curves, title=title, billed_label=billed_label, runs=runs)
    try:
        figure.savefig(path, dpi=DPI)
    except OSError as exc:
        raise PlotError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        plt.close(figure)


def draw_rounds(
    curves: Sequence[Curve],
    *,
    title: str,
    billed_label: str,
    runs: Sequence[int] | None = None,
) -> Any:
    """The figure: resident tokens above, cumulative billed input below, rounds as whole
    numbers on the shared axis, and the legend in a row above the plots, clear of the lines.

    Args:
        curves: one per strategy, no clearing first.
        title: above the top panel.
        billed_label: the bottom panel's axis label.
        runs: how many runs reached each round, drawn dotted on a right-hand axis when
            the curves add several runs up (their sums fall as runs end).
    """
    plt = _pyplot()
    figure, (top, bottom) = plt.subplots(2, 1, figsize=SIZE, sharex=True, dpi=DPI)
    colours = _colours(curves)
    for curve in curves:
        rounds = range(1, len(curve.resident) + 1)
        style: dict[str, Any] = {
            "color": colours[curve.label],
            "linewidth": 1.6,
            "linestyle": "--" if curve.dashed else "-",
        }
        top.plot(rounds, curve.resident, label=curve.label, **style)
        bottom.plot(rounds, list(accumulate(curve.billed)), label=curve.label, **style)
    top.set_ylabel("resident tool tokens")
    bottom.set_ylabel(billed_label)
    bottom.set_xlabel("round (model call)")
    if runs is not None and max(runs, default=0) > 1:
        going = top.twinx()
        going.plot(range(1, len(runs) + 1), runs, color="#bbbbbb", linestyle=":", linewidth=1.2)
        going.set_ylabel("runs still going (dotted)", color="#888888")
        going.tick_params(axis="y", colors="#888888")
        going.set_ylim(bottom=0)
        going.yaxis.set_major_locator(_integers())
    for axis in (top, bottom):
        axis.grid(True, alpha=0.3)
        axis.yaxis.set_major_formatter(_thousands())
        axis.set_ylim(bottom=0)
    longest = max((len(c.resident) for c in curves), default=1)
    bottom.xaxis.set_major_locator(_integers())
    bottom.set_xlim(1, max(longest, 2))
    top.legend(
        loc="lower left",
        bbox_to_anchor=(0.0, 1.0),
        ncol=min(len(curves), 3) or 1,
        fontsize=9,
        frameon=False,
        borderaxespad=0.3,
    )
    figure.suptitle(title, fontsize=11, x=0.01, ha="left")
    figure.tight_layout()
    return figure


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise PlotError(f"--plot needs matplotlib: {CLI_EXTRA}") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _integers() -> Any:
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True, steps=[1, 2, 5, 10])


def _thousands() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _pos: _short(value))


def _short(value: float) -> str:
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:g}{unit}"
    return f"{value:g}"


def _colours(curves: Sequence[Curve]) -> Mapping[str, str]:
    # no clearing in grey, the others in the default cycle's order
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    out: dict[str, str] = {}
    for curve in curves:
        if curve.label not in out:
            base = curve.label.split(" (")[0]
            out[curve.label] = "#7f7f7f" if base == "no clearing" else palette[len(out) % 6]
    return out
