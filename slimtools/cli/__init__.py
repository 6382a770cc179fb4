"""The ``slimtools`` command: one parser, a module per group of subcommands.

``analyze`` (:mod:`slimtools.cli.analyze`) shows what tool results cost in transcripts and
what clearing would change; ``report`` and ``bill`` (:mod:`slimtools.cli.report`) measure
clearing against its peers and print the closed-form bill; ``clear`` and ``restore``
(:mod:`slimtools.cli.files`) try a policy on a transcript file; ``proxy`` and ``suggest``
(:mod:`slimtools.cli.proxy`) slim an MCP server you do not own; ``gateway``
(:mod:`slimtools.cli.gateway`) clears for an agent you do not own, between it and its model
API; ``recall``
(:mod:`slimtools.cli.recall`) asks your model about cleared results. Every command exits 0 when
it did its work, 1 when a file failed and 2 on bad usage; errors are one line on stderr
unless ``--verbose``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from slimtools import __version__
from slimtools.cli import analyze, files, gateway, proxy, recall, report
from slimtools.cli._options import Formatter
from slimtools.cli._output import add_verbose_option, one_line_warnings
from slimtools.errors import ConfigurationError

__all__ = ["main"]

ROOT_EPILOG = """\
examples:
  slimtools analyze ~/.claude/projects/my-project --by tool
  slimtools bill 40 5000 --slim 0.1
  python -m slimtools clear session.jsonl -o cleared.jsonl --audit originals.jsonl

exit status: 0 done, 1 a file could not be read or written (or a model call failed),
2 bad usage; `slimtools COMMAND --help` says what each command's statuses mean
"""


def parser() -> argparse.ArgumentParser:
    """The ``slimtools`` argument parser with every subcommand."""
    root = argparse.ArgumentParser(
        prog="slimtools",
        description="Keep LLM agents' context windows lean: measure tool-result tokens, "
        "try clearing policies on transcripts, slim MCP servers you don't own.",
        epilog=ROOT_EPILOG,
        formatter_class=Formatter,
    )
    root.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = root.add_subparsers(dest="command", required=True)
    for module in (analyze, report, files, proxy, gateway, recall):
        module.add_commands(sub)
    for command in sub.choices.values():  # every command, unless it added its own
        if "--verbose" not in command._option_string_actions:
            add_verbose_option(command)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``slimtools`` console script; returns the exit status."""
    args = parser().parse_args(argv)
    try:
        with one_line_warnings():
            status: int = args.run(args)
    except ConfigurationError as exc:  # options that parse but do not go together
        print(f"slimtools: {exc}", file=sys.stderr)
        return 2
    except (FileNotFoundError, ValueError) as exc:
        print(f"slimtools: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # piped into `head` and closed early: not an error
        # Point stdout at devnull so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("slimtools: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug or an unforeseen failure: one line unless --verbose
        if getattr(args, "verbose", False):
            raise
        print(
            f"slimtools {args.command}: {type(exc).__name__}: {exc} (--verbose shows where)",
            file=sys.stderr,
        )
        return 1
    return status
