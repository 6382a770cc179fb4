"""``python -m slimtools.cli``: the ``slimtools`` command."""

import sys

from slimtools.cli import main

sys.exit(main())
