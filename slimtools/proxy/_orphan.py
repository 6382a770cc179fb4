"""Start the upstream so that it never outlives the proxy: ``python -m slimtools.proxy._orphan``.

``python -m slimtools.proxy._orphan PPID COMMAND [ARGS...]`` asks Linux to send it SIGTERM when
its parent (the proxy) dies (``prctl(PR_SET_PDEATHSIG)``, kept across ``exec``), checks the
parent is still ``PPID``, then becomes ``COMMAND``. Without it an upstream whose proxy was
killed lives on with PPID 1. Elsewhere it only execs (the stdio pipes closing still end
well-behaved servers).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> None:
    """Arm the parent-death signal, then exec the upstream command."""
    parent, command = int(argv[0]), argv[1:]
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - exotic libc
            pass
        if os.getppid() != parent:  # the proxy died before the signal was armed
            sys.exit(1)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"cannot run {command[0]!r}: {exc.strerror}", file=sys.stderr)
        sys.exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
