"""``python -m coarsen_nb.benchmarks``: the benchmark command line (see :mod:`benchmarks.cli`)."""

import sys

from coarsen_nb.benchmarks.cli import main

# Guarded: spawned worker processes re-import the main module as ``__mp_main__``.
if __name__ == "__main__":
    sys.exit(main())
