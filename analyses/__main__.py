"""``python -m analyses``: see :mod:`analyses.site.cli`."""

import sys

from analyses.site.cli import main

sys.exit(main())
