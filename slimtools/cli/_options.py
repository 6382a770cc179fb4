"""What every command's parser shares: the help layout and the ``--by`` vocabulary.

:class:`Formatter` wraps descriptions to the terminal but keeps indented blocks (the
examples and exit statuses of every epilog) as written. :func:`add_by_option` gives every
command that groups its tables the same words: ``file``, ``source``, ``tool``; the older
``report --by transcript`` still works, with a deprecation note on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

BY_ALIASES: Mapping[str, str] = {"transcript": "file"}
"""Deprecated ``--by`` spellings and the word that replaced them."""


class Formatter(argparse.HelpFormatter):
    """Fill plain paragraphs to the terminal; keep as written those with line breaks and
    those of an epilog (``example...:`` and ``exit status:``)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        def fill(paragraph: str) -> str:
            if "\n" in paragraph.strip("\n") or paragraph.startswith(_RAW):
                return paragraph
            return super(Formatter, self)._fill_text(paragraph, width, indent)

        return "\n\n".join(fill(p) for p in text.split("\n\n"))


_RAW = ("example", "exit status")


def _by(choices: Sequence[str]) -> Callable[[str], str]:
    """An argparse type for ``--by``: a deprecated spelling becomes its replacement."""

    def parse(text: str) -> str:
        new = BY_ALIASES.get(text)
        if new is not None and new in choices:
            print(
                f"slimtools: --by {text} is deprecated and will go; say --by {new}",
                file=sys.stderr,
            )
            return new
        return text

    return parse


def add_by_option(
    parser: argparse.ArgumentParser | Any, choices: Sequence[str], *, help: str
) -> None:
    """Add ``--by`` with ``choices`` (the first is the default) and the deprecated aliases."""
    parser.add_argument(
        "--by", type=_by(choices), choices=tuple(choices), default=choices[0], help=help
    )
