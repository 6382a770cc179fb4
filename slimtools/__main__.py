"""``python -m slimtools``: the ``slimtools`` command, where its script is not on PATH."""

import sys

from slimtools.cli import main

sys.exit(main())
