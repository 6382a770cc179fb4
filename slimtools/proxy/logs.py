"""The proxy's log lines on stderr: one line per event unless ``--verbose``.

A tool that fails is logged by the core with its traceback (``exc_info``); through a proxy
that is tens of lines per failed call on a client's stderr. By default each record is one
line with the exception's type and message; ``--verbose`` keeps the tracebacks.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["OneLineFormatter", "configure_logging"]


class OneLineFormatter(logging.Formatter):
    """``LEVEL name: message (ExcType: text)``, never more than one line."""

    def format(self, record: logging.LogRecord) -> str:
        """The record on one line, its exception summarised rather than traced."""
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text = f"{text} ({type(exc).__name__}: {exc})"
        line = f"{record.levelname.lower()} {record.name}: {text}"
        return " ".join(line.split())


def configure_logging(*, verbose: bool) -> None:
    """Send warnings (slimtools', the SDK's) to stderr, one line each unless ``verbose``."""
    handler = logging.StreamHandler(sys.stderr)
    if verbose:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    else:
        handler.setFormatter(OneLineFormatter())
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("slimtools").setLevel(logging.INFO if verbose else logging.WARNING)
