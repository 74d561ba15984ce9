"""``python -m analyses``: see :mod:`analyses.cli`."""

import sys

from analyses.cli import main

sys.exit(main())
