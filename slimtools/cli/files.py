"""``slimtools clear`` and ``slimtools restore``: try a clearing policy on a transcript file.

``clear`` writes the transcript back in its own format with stale tool results replaced by
placeholders (and nothing else changed); ``restore`` puts the originals back from the audit
``clear --audit`` wrote, byte for byte. Both are thin shells over
:func:`slimtools.transcripts.clear_file` and :func:`slimtools.transcripts.restore_file`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from slimtools.cli._options import Formatter
from slimtools.cli._policy import POLICIES, add_policy_options, build_policy, options_of
from slimtools.errors import ConfigurationError, TranscriptError
from slimtools.transcripts import SOURCES, clear_file, restore_file

CLEAR_EXAMPLE = """\
example:
  slimtools clear session.jsonl -o cleared.jsonl --keep-turns 3 --audit originals.jsonl
  slimtools restore cleared.jsonl --audit originals.jsonl -o session.restored.jsonl

A session still being written (its last line incomplete) is read up to that line, with a
warning; it is not cleared in place, where its writer's next lines would be lost.

exit status: 0 written, 1 the file could not be read or written, 2 bad usage
"""
RESTORE_EXAMPLE = """\
example:
  slimtools restore cleared.jsonl --audit originals.jsonl -o session.restored.jsonl

exit status: 0 written, 1 a file could not be read or does not match the audit, 2 bad usage
"""


def add_commands(sub: Any) -> None:
    """Register ``clear`` and ``restore`` on the ``slimtools`` subcommand parser."""
    clear = sub.add_parser(
        "clear",
        help="clear stale tool results in a transcript file, keeping its format",
        description="Clear stale tool results in a transcript file and write it back in the "
        "same format: only the cleared results change (untouched JSONL lines stay "
        "byte-identical). Formats are recognised from the content: " + ", ".join(SOURCES) + ".",
        epilog=CLEAR_EXAMPLE,
        formatter_class=Formatter,
    )
    clear.add_argument("file", metavar="FILE", help="the transcript to clear")
    clear.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="the file to write (FILE itself clears in place; a symlink is written through), "
        "e.g. cleared.jsonl",
    )
    clear.add_argument(
        "--audit",
        metavar="AUDIT.jsonl",
        help="append the originals here (restore reads it), e.g. originals.jsonl",
    )
    clear.add_argument(
        "--format",
        choices=SOURCES,
        metavar="NAME",
        help="force the transcript format: " + ", ".join(SOURCES) + "; e.g. claude_code",
    )
    add_policy_options(clear, names=[n for n in POLICIES if n != "none"])
    clear.set_defaults(run=run_clear)

    restore = sub.add_parser(
        "restore",
        help="put the originals back into a cleared transcript file",
        description="Put back the tool results `slimtools clear --audit` replaced: the output "
        "is byte-identical to the file that was cleared.",
        epilog=RESTORE_EXAMPLE,
        formatter_class=Formatter,
    )
    restore.add_argument("file", metavar="FILE", help="the cleared transcript")
    restore.add_argument(
        "--audit",
        required=True,
        metavar="AUDIT.jsonl",
        help="the audit `clear --audit` wrote, e.g. originals.jsonl",
    )
    restore.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="the file to write (may be FILE itself), e.g. session.restored.jsonl",
    )
    restore.set_defaults(run=run_restore)


def run_clear(args: argparse.Namespace) -> int:
    """Run ``slimtools clear``."""
    try:
        policy = build_policy(args.policy, cache=args.cache, **options_of(args))
        done = clear_file(args.file, args.output, policy, format=args.format, audit=args.audit)
    except ConfigurationError as exc:
        return _fail(exc, 2)
    except TranscriptError as exc:
        return _fail(exc, 1)
    except OSError as exc:  # the output or the audit cannot be written
        return _fail(f"cannot write {exc.filename or args.output}: {exc.strerror or exc}", 1)
    runs = f"{done.runs} run" + ("s" if done.runs != 1 else "")
    ratio = f" (x{done.tokens_after / done.tokens_before:.2f})" if done.tokens_before else ""
    print(
        f"{done.source} transcript {args.file} ({runs}): cleared {done.cleared} of "
        f"{done.results} tool results, {done.tokens_before:,} -> {done.tokens_after:,} "
        f"tokens{ratio}"
    )
    kept = f"; originals appended to {args.audit}" if args.audit else ""
    print(f"wrote {args.output}{kept}")
    if not args.audit and done.cleared:
        print(
            f"note: no --audit given: the originals are not kept and {args.output} cannot "
            "be restored",
            file=sys.stderr,
        )
    return 0


def run_restore(args: argparse.Namespace) -> int:
    """Run ``slimtools restore``."""
    try:
        count = restore_file(args.file, args.audit, args.output)
    except TranscriptError as exc:
        return _fail(exc, 1)
    except OSError as exc:
        return _fail(f"cannot write {exc.filename or args.output}: {exc.strerror or exc}", 1)
    print(f"restored {count} tool results from {args.audit} into {args.output}")
    return 0


def _fail(message: object, status: int) -> int:
    print(f"slimtools: {message}", file=sys.stderr)
    return status
