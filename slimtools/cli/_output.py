"""Tables, progress and log lines for the commands: rich when the ``cli`` extra is installed,
plain text otherwise; colour and progress bars only on a terminal, and never under
``NO_COLOR``; log records as one line each on stderr unless ``--verbose``.

A :class:`Table` is plain data (a title, columns, rows of strings with an optional style);
:func:`print_tables` renders it with rich's table layout or, without rich, with aligned
columns, so every command has one description of its output and two ways to draw it.
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, Literal

Style = Literal["", "bold", "good", "bad", "dim"]
_RICH_STYLES = {"": "", "bold": "bold", "good": "green", "bad": "red", "dim": "dim"}
CLI_EXTRA = "pip install 'slimtools[cli]'"


@dataclass
class Cell:
    """A table cell: its text and how to colour it on a terminal."""

    text: str
    style: Style = ""


@dataclass
class Table:
    """A titled table: column headers (``">"`` first: right-aligned), rows of cells.

    A row may end a section (a blank line follows it), and a row's style applies to its
    cells that have none of their own.
    """

    title: str
    columns: Sequence[str]
    rows: list[tuple[list[Cell], Style, bool]] = field(default_factory=list)
    note: str = ""

    def add(self, *cells: str | Cell, style: Style = "", end_section: bool = False) -> None:
        """Add a row; plain strings become unstyled cells."""
        row = [c if isinstance(c, Cell) else Cell(c) for c in cells]
        if len(row) != len(self.columns):
            raise ValueError(f"{self.title}: {len(row)} cells for {len(self.columns)} columns")
        self.rows.append((row, style, end_section))


def has_rich() -> bool:
    """Whether rich (the ``cli`` extra) can be imported."""
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def colour_for(stream: IO[str]) -> bool:
    """Colour on a terminal only, unless ``NO_COLOR`` is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def print_tables(
    tables: Sequence[Table], stream: IO[str] | None = None, *, colour: bool | None = None
) -> None:
    """Print ``tables`` one after another, separated by a blank line."""
    out = stream if stream is not None else sys.stdout
    colour = colour_for(out) if colour is None else colour
    render = _rich if has_rich() else _plain
    out.write("\n\n".join(render(t, colour) for t in tables) + "\n")


def _header(column: str) -> tuple[str, bool]:
    """A column's title and whether it is right-aligned."""
    return (column[1:], True) if column.startswith(">") else (column, False)


def _plain(table: Table, colour: bool) -> str:
    heads = [_header(c) for c in table.columns]
    widths = [len(h) for h, _ in heads]
    for row, _, _ in table.rows:
        widths = [max(w, len(c.text)) for w, c in zip(widths, row, strict=True)]

    def line(texts: Sequence[str]) -> str:
        cells = [
            t.rjust(w) if right else t.ljust(w)
            for t, w, (_, right) in zip(texts, widths, heads, strict=True)
        ]
        return "  ".join(cells).rstrip()

    lines = [table.title, line([h for h, _ in heads]), "  ".join("-" * w for w in widths)]
    for row, _, end in table.rows:
        lines.append(line([c.text for c in row]))
        if end:
            lines.append("")
    if table.note:
        lines.append(table.note)
    return "\n".join(lines).rstrip("\n")


def _rich(table: Table, colour: bool) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table as RichTable
    from rich.text import Text

    # Title and note are printed around the table, not as its title and caption, which
    # rich would wrap to the table's width.
    drawn = RichTable(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        header_style="bold" if colour else "",
    )
    for column in table.columns:
        title, right = _header(column)
        drawn.add_column(title, justify="right" if right else "left", no_wrap=True)
    for row, style, end in table.rows:
        cells = [Text(c.text, style=_RICH_STYLES[c.style or style]) for c in row]
        drawn.add_row(*cells, end_section=end)
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=10_000,
        no_color=not colour,
        force_terminal=colour,
        highlight=False,
        color_system="standard" if colour else None,
    )
    console.print(Text(table.title, style="bold" if colour else ""))
    console.print(drawn)
    if table.note:
        console.print(Text(table.note, style="dim" if colour else ""))
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())


class Progress:
    """A byte-counting progress bar on stderr, shown on a terminal with rich only."""

    def __init__(self, bar: Any, task: Any) -> None:
        self._bar, self._task = bar, task

    def update(self, done: int, total: int, label: str) -> None:
        """Show ``done`` of ``total`` bytes while ``label`` is read."""
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=total or 1, description=label)


@contextmanager
def progress(enabled: bool = True) -> Iterator[Progress]:
    """A :class:`Progress` that draws only when asked, on a terminal, with rich installed."""
    if not (enabled and has_rich() and sys.stderr.isatty()):
        yield Progress(None, None)
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.progress import Progress as Bar

    console = Console(file=sys.stderr, no_color=not colour_for(sys.stderr))
    columns = (
        TextColumn("{task.description}", style=""),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Bar(*columns, console=console, transient=True) as bar:
        yield Progress(bar, bar.add_task("reading", total=None))


VERBOSE_HELP = (
    "errors with their traceback, and log details, on stderr (default: one line per error "
    "or warning)"
)


def add_verbose_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--verbose`` (and ``-v`` when free) as ``args.verbose``: the command's errors
    keep their traceback, and :func:`setup_logging` logs details."""
    flags = ["--verbose"] if "-v" in parser._option_string_actions else ["-v", "--verbose"]
    parser.add_argument(*flags, action="store_true", help=VERBOSE_HELP)


class OneLineFormatter(logging.Formatter):
    """``logger: level: message[: ExceptionType: first line]``, never a traceback.

    A failed tool call in a long-running command (the proxy) is then one greppable line on
    stderr, not a boxed traceback drawn to a terminal's width in a log file.
    """

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line; an exception adds its type and first line only."""
        text = f"{record.name}: {record.levelname.lower()}: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            detail = str(exc).strip().splitlines()
            text += f": {type(exc).__name__}" + (f": {detail[0]}" if detail else "")
        return " ".join(text.splitlines())


def setup_logging(verbose: bool = False, stream: IO[str] | None = None) -> logging.Handler:
    """Send every log record to ``stream`` (stderr): one line each, or, with ``verbose``,
    INFO and above with full plain tracebacks.

    Call it before starting a server that configures logging itself (the MCP server calls
    ``logging.basicConfig`` with rich's boxed tracebacks, which then finds a handler and
    does nothing). The root logger's earlier handlers are replaced.

    Returns:
        The handler installed on the root logger.
    """
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    if verbose:
        handler.setFormatter(logging.Formatter("%(name)s: %(levelname)s: %(message)s"))
    else:
        handler.setFormatter(OneLineFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    return handler


@contextmanager
def one_line_warnings(stream: IO[str] | None = None) -> Iterator[None]:
    """Show every warning raised inside the block as ``slimtools: warning: ...`` on stderr,
    once per message (a file read twice warns twice), instead of Python's two-line format.
    slimtools' own warnings (a torn line skipped) are shown every time they differ."""
    from slimtools.transcripts import TornLineWarning

    seen: set[str] = set()

    def show(  # noqa: PLR0917 (warnings.showwarning's signature)
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: IO[str] | None = None,
        line: str | None = None,
    ) -> None:
        text = f"slimtools: warning: {message}"
        if text not in seen:
            seen.add(text)
            print(text, file=stream if stream is not None else sys.stderr)

    with warnings.catch_warnings():
        warnings.simplefilter("always", TornLineWarning)
        warnings.showwarning = show
        yield
