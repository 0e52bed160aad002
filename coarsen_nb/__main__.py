"""``python -m coarsen_nb ...``: the ``coarsen-nb`` command (:mod:`coarsen_nb.cli`), e.g.
``python -m coarsen_nb warmup``."""

import sys

from coarsen_nb.cli import main

sys.exit(main())
